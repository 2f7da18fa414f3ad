/** What a subcommand may touch of the process: its streams and the environment, read once. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  /** A terminal's stderr has `isTTY: true`; only then does `apply` draw a progress line. */
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean };
  /** Read only for `-f -`; absent where the caller has no input to give. */
  readonly stdin?: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** A subcommand returns its exit code; see `exit-codes.ts`. */
export type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

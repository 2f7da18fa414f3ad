/** What a subcommand may touch of the process: its output streams and the environment, read once. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** A subcommand returns its exit code; see `exit-codes.ts`. */
export type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

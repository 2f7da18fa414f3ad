// What the CLI tests share: running a subcommand as main() would, with captured output; a namespace of
// a test's own; a ConfigMap manifest spelled out line by line, for the tests that compare its exact text
// with what kubectl makes of it.

import { Readable, Writable } from 'node:stream';
import type { CliIo, Command } from '../../src/cli/cli-io.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  createNamespace,
  uniqueName,
} from '../harness/test-cluster.js';
import { cliHome } from '../harness/cli-home.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  /** The environment; default: KUBECONFIG naming the test cluster's admin kubeconfig. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** What `-f -` reads. */
  readonly stdin?: string;
  /** Make stderr look like a terminal, as it is for a person at a shell. */
  readonly tty?: boolean;
  readonly cwd?: string;
}

/** Runs a subcommand as main() would, with captured output and the given stdin, env and terminal. */
export async function runCli(
  command: Command,
  argv: readonly string[],
  options: CliRunOptions = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const err = Object.assign(
    sink((text) => (stderr += text)),
    { isTTY: options.tty === true },
  );
  const io: CliIo = {
    stdout: sink((text) => (stdout += text)),
    stderr: err,
    ...(options.stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(options.stdin)]) }),
    env: options.env ?? { KUBECONFIG: adminKubeconfigPath(), HOME: cliHome() },
    cwd: options.cwd ?? process.cwd(),
  };
  const code = await command(argv, io);
  return { code, stdout, stderr };
}

export async function freshNamespace(prefix = 'cli'): Promise<string> {
  const namespace = uniqueName(prefix);
  await createNamespace(adminKubeConfig(), namespace);
  return namespace;
}

/**
 * A ConfigMap manifest `name` in `namespace`, with `rest` as the lines after its metadata (data:, or
 * fields a test puts there on purpose), one line each and a final newline.
 */
export const configMapFile = (namespace: string, name: string, ...rest: string[]): string =>
  [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    ...rest,
    '',
  ].join('\n');

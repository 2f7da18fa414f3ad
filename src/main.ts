import type { CliIo, Command } from './cli/cli-io.js';
import { ExitCode } from './cli/exit-codes.js';
import { reportUnexpected } from './cli/report-unexpected.js';

const usage = `usage: applyset <command> [flags]

commands:
  apply       apply files and directories of manifests as one set, and prune what left it
  diff        print what apply would change: field-level diffs and the prunes
  patch       print the patch kubectl apply would send for one object
  controller  run the GitOps controller that reconciles ApplySet resources
  get         list ApplySets: revision, suspended, Ready and its message
  reconcile   ask the controller to reconcile an ApplySet now, and wait for the outcome
  suspend     stop reconciling an ApplySet
  resume      reconcile a suspended ApplySet again, and wait for the outcome
  ui          serve the web view of the ApplySets on a loopback address
  version     print the version (also --version)
`;

// Subcommands are loaded lazily so `applyset patch` does not pay for the controller's imports.
const commands: Record<string, () => Promise<Command>> = {
  version: async () => (await import('./cli/version-command.js')).versionCommand,
  patch: async () => (await import('./cli/patch-command.js')).patchCommand,
  apply: async () => (await import('./cli/apply-command.js')).applyCommand,
  diff: async () => (await import('./cli/diff-command.js')).diffCommand,
  controller: async () => (await import('./cli/controller-command.js')).controllerCommand,
  get: async () => (await import('./cli/get-command.js')).getCommand,
  reconcile: async () => (await import('./cli/reconcile-command.js')).reconcileCommand,
  suspend: async () => (await import('./cli/reconcile-command.js')).suspendCommand,
  resume: async () => (await import('./cli/reconcile-command.js')).resumeCommand,
  ui: async () => (await import('./cli/ui-command.js')).uiCommand,
};

/** The composition root: reads the process environment once and hands it to the subcommand. */
export async function main(argv: readonly string[]): Promise<number> {
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    // Lazily: only `-f -` touches standard input, and a terminal's stdin is not opened otherwise.
    get stdin() {
      return process.stdin;
    },
    env: { ...process.env },
    cwd: process.cwd(),
  };
  const [first, ...rest] = argv;
  // `applyset --version`, the spelling most commands answer to, is `applyset version`.
  const name = first === '--version' ? 'version' : first;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage);
    return name === undefined ? ExitCode.badInput : ExitCode.ok;
  }
  const load = commands[name];
  if (load === undefined) {
    io.stderr.write(`applyset: unknown command "${name}"\n\n${usage}`);
    return ExitCode.badInput;
  }
  const command = await load();
  try {
    return await command(rest, io);
  } catch (error) {
    // What a command did not turn into an exit code of its own is a bug, reported as one.
    return reportUnexpected(name, error, io);
  }
}

/** The exit status a Go program such as kubectl gets when SIGPIPE kills it: 128 + 13. */
const CLOSED_PIPE_EXIT_CODE = 141;

/**
 * When the reader of the output goes away (`applyset apply … | head -1`), the next write fails with
 * EPIPE. End then, quietly and with kubectl's status, instead of dying on an unhandled 'error' event with
 * a stack trace. Any other stream error stays fatal, as it was.
 */
export function exitOnClosedPipe(
  streams: readonly NodeJS.WritableStream[],
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      exit(CLOSED_PIPE_EXIT_CODE);
    });
  }
}

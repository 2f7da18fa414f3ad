import {
  accessFlagSpecs,
  getApplySet,
  openApplySetAccess,
  patchApplySet,
  readyOf,
  requestReconcile,
  type ApplySetAccess,
} from './applyset-access.js';
import type { CliIo, Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { timeoutFlag } from './get-command.js';
import { flagIsTrue, parseCommandLineWithArgs, single, UsageError } from './parse-command-line.js';
import { KubeConfigError } from '../kube/kubeconfig-error.js';

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

const usages = {
  reconcile: `usage: applyset reconcile NAME [-n NAMESPACE] [--with-source] [--timeout 5m] [--kubeconfig PATH] [--context NAME]

Asks the controller to reconcile the ApplySet now and waits until it has: the reconcile-requested-at
annotation gets a new value, and the command returns when the status says that value was handled,
printing the revision applied (exit 0) or the reason it is not Ready (exit 1). Every requested
reconcile fetches its Git source again, so --with-source (Flux's flag) is accepted and changes nothing.
`,
  suspend: `usage: applyset suspend NAME [-n NAMESPACE] [--kubeconfig PATH] [--context NAME]

Sets spec.suspend: the controller stops fetching, applying and pruning the ApplySet until it is resumed.
`,
  resume: `usage: applyset resume NAME [-n NAMESPACE] [--timeout 5m] [--kubeconfig PATH] [--context NAME]

Clears spec.suspend and waits for the reconcile that follows, as \`applyset reconcile\` does.
`,
} as const;

type Verb = keyof typeof usages;

function parse(verb: Verb, argv: readonly string[], io: CliIo) {
  try {
    const specs = {
      ...accessFlagSpecs,
      ...(verb === 'suspend' ? {} : { timeout: { type: 'string' as const } }),
      ...(verb === 'reconcile' ? { 'with-source': { type: 'boolean' as const } } : {}),
    };
    const { flags, args } = parseCommandLineWithArgs(argv, specs, 1);
    if (flagIsTrue(flags, 'help')) {
      io.stdout.write(usages[verb]);
      return ExitCode.ok;
    }
    const [name] = args;
    if (name === undefined) throw new UsageError('the name of the ApplySet is required');
    return { flags, name, timeoutMs: timeoutFlag(single(flags, 'timeout'), DEFAULT_TIMEOUT_MS) };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`applyset ${verb}: ${error.message}\n\n${usages[verb]}`);
    return ExitCode.badInput;
  }
}

async function waitAndReport(
  verb: Verb,
  access: ApplySetAccess,
  name: string,
  timeoutMs: number,
  io: CliIo,
): Promise<number> {
  const handled = await requestReconcile(access, name, { timeoutMs, now: () => new Date() });
  if (handled === 'timeout') {
    io.stderr.write(
      `applyset ${verb}: the controller did not handle the request within ${timeoutMs / 1000}s (is it running, and does it watch namespace ${access.namespace}?)\n`,
    );
    return ExitCode.failure;
  }
  const ready = readyOf(handled);
  if (ready.status === 'True') {
    io.stdout.write(`applyset/${name} reconciled: ${ready.message}\n`);
    return ExitCode.ok;
  }
  io.stderr.write(`applyset/${name} not ready: ${ready.reason}: ${ready.message}\n`);
  return ExitCode.partialFailure;
}

function command(verb: Verb): Command {
  return async (argv, io) => {
    const parsed = parse(verb, argv, io);
    if (typeof parsed === 'number') return parsed;
    const access = await openApplySetAccess(parsed.flags, io, verb);
    if (typeof access === 'number') return access;
    try {
      const current = await getApplySet(access, parsed.name);
      if (current === undefined) {
        io.stderr.write(
          `applyset ${verb}: applyset "${parsed.name}" not found in namespace ${access.namespace}\n`,
        );
        return ExitCode.partialFailure;
      }
      switch (verb) {
        case 'suspend':
          await patchApplySet(access, parsed.name, { spec: { suspend: true } });
          io.stdout.write(`applyset/${parsed.name} suspended\n`);
          return ExitCode.ok;
        case 'resume':
          await patchApplySet(access, parsed.name, { spec: { suspend: false } });
          io.stdout.write(`applyset/${parsed.name} resumed\n`);
          return await waitAndReport(verb, access, parsed.name, parsed.timeoutMs, io);
        case 'reconcile':
          if (current.spec.suspend === true) {
            io.stderr.write(`applyset reconcile: applyset/${parsed.name} is suspended; resume it first\n`);
            return ExitCode.partialFailure;
          }
          return await waitAndReport(verb, access, parsed.name, parsed.timeoutMs, io);
      }
    } catch (error) {
      io.stderr.write(`applyset ${verb}: ${(error as Error).message}\n`);
      // A credential the kubeconfig cannot give (an exec plugin that fails) is bad input.
      return error instanceof KubeConfigError ? ExitCode.badInput : ExitCode.failure;
    }
  };
}

/** `applyset reconcile NAME`: reconcile now and wait for the outcome. */
export const reconcileCommand = command('reconcile');
/** `applyset suspend NAME`: stop reconciling until resumed. */
export const suspendCommand = command('suspend');
/** `applyset resume NAME`: reconcile again, and wait for the first outcome. */
export const resumeCommand = command('resume');

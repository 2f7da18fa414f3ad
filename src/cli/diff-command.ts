import type { Command } from './cli-io.js';
import { kubectlName, parseFlags, runEngine } from './apply-command.js';
import { ExitCode } from './exit-codes.js';

/**
 * `applyset diff`: the field-level difference between DIR and the cluster, computed with the same
 * merge as `apply` and writing nothing. Like `kubectl diff`, exit 0 means no change, 1 means changes,
 * and anything higher an error.
 */
export const diffCommand: Command = async (argv, io) => {
  const flags = parseFlags('diff', argv, io);
  if (typeof flags === 'number') return flags;
  const run = await runEngine('diff', flags, io, { dryRun: true, prune: flags.prune });
  if (typeof run === 'number') return run === ExitCode.partialFailure ? ExitCode.failure : run;
  let changed = false;
  let failed = false;
  for (const outcome of run.result.outcomes) {
    const name =
      outcome.ref.namespace === ''
        ? kubectlName(outcome.ref)
        : `${kubectlName(outcome.ref)} -n ${outcome.ref.namespace}`;
    switch (outcome.action) {
      case 'would-create':
        changed = true;
        io.stdout.write(`+ ${name} (new)\n`);
        break;
      case 'would-configure':
        changed = true;
        io.stdout.write(`~ ${name}\n${(outcome.diff ?? []).map((line) => `    ${line}\n`).join('')}`);
        break;
      case 'would-prune':
        changed = true;
        io.stdout.write(`- ${name} (pruned)\n`);
        break;
      case 'conflict':
      case 'failed':
        failed = true;
        io.stderr.write(`error: ${name}: ${outcome.message}\n`);
        break;
      default:
        break;
    }
  }
  if (failed) return ExitCode.failure;
  return changed ? ExitCode.partialFailure : ExitCode.ok;
};

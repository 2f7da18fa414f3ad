import { kubectlName } from './apply-command.js';
import { diffFlagSpecs, parseApplySetFlags } from './apply-set-flags.js';
import type { Command } from './cli-io.js';
import { diffApplySetCommand, namesApplySetObject } from './diff-applyset-command.js';
import { ExitCode } from './exit-codes.js';

const usage = `usage: applyset diff (-f FILENAME [-f FILENAME ...] [-R] | -k DIR | --oci oci://HOST/REPO OCI-FLAGS
                     | --helm-chart CHART HELM-FLAGS)
                    --applyset NAME [-n NAMESPACE]
                    [--kustomize-binary PATH] [--kustomize-timeout 60s] [--kustomize-max-memory 256Mi]
                    [--prune[=true|false]] [--allow-empty] [--kubeconfig PATH] [--context NAME]
                    [--field-manager NAME] [--validate[=strict|warn|ignore|true|false]]

Prints what \`applyset apply\` with the same flags would change, object by object, computed with the
same three-way merge and writing nothing:
  + KIND/NAME -n NS (new)                     the object would be created
  ~ KIND/NAME -n NS                           it would be configured; the changed fields follow
  - KIND/NAME -n NS (pruned by apply --prune) \`apply --prune\` would delete it
The prunes are shown by default (--prune is accepted, as kubectl diff accepts it); --prune=false
leaves them out, for a plain \`apply\` without --prune. -f, -R, -k, --oci and its flags (--tag,
--digest, --path, --insecure, --verify-key, --oci-max-*), --helm-chart and its flags (--values, --set,
--release-name, --include-crds, --skip-tests, --helm-binary), the --kustomize-* flags,
--kubeconfig, --context and the sops flags (--decryption-key-file, --decryption-scratch-dir) read as in
\`applyset apply\`. Like kubectl diff: exit 0 when nothing would change, 1 when something would, 2 for
bad input and 3 when the diff could not be computed.

applyset diff --applyset-object NAME [-n NAMESPACE] [--local DIR | --ref REF] [-o text|markdown]
previews what the controller would do for the ApplySet NAME instead: see
\`applyset diff --applyset-object NAME --help\`.
`;

/**
 * `applyset diff`: the field-level difference between the files and the cluster, computed with the
 * same merge as `apply` and writing nothing. Like `kubectl diff`, exit 0 means no change, 1 means
 * changes, and anything higher an error.
 */
export const diffCommand: Command = async (argv, io) => {
  if (namesApplySetObject(argv)) return diffApplySetCommand(argv, io);
  const flags = parseApplySetFlags(argv, io, {
    command: 'diff',
    specs: diffFlagSpecs,
    usage,
    pruneByDefault: true,
  });
  if (typeof flags === 'number') return flags;
  // Loaded only now, as in apply: `--help` does not wait for the engine and the Kubernetes client.
  const { runApplySet } = await import('./run-apply-set.js');
  const run = await runApplySet('diff', flags, io, { dryRun: true, prune: flags.prune });
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
        io.stdout.write(`- ${name} (pruned by apply --prune)\n`);
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

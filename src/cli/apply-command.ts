import type { ApplySetResult, ObjectOutcome } from '../apply/apply-set-contract.js';
import { describeManifestSource } from '../manifests/manifest-error.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { applyFlagSpecs, parseApplySetFlags } from './apply-set-flags.js';
import type { CliIo, Command } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import type { ApplySetProgress } from '../apply/apply-set-contract.js';

const usage = `usage: applyset apply (-f FILENAME [-f FILENAME ...] [-R] | -k DIR | --oci oci://HOST/REPO OCI-FLAGS
                      | --helm-chart CHART HELM-FLAGS)
                     --applyset NAME [-n NAMESPACE]
                     [--kustomize-binary PATH] [--kustomize-timeout 60s] [--kustomize-max-memory 256Mi]
                     [--prune] [--dry-run[=client|none]] [--allow-empty] [--force] [--adopt=false]
                     [--kubeconfig PATH] [--context NAME] [--field-manager NAME]
                     [--validate[=strict|warn|ignore|true|false]] [--wait [--timeout 5m]]
                     [--concurrency 16]

Applies the objects of every -f as one set, exactly as kubectl apply would, and records the set in
the ConfigMap NAME (the apply-config object, created if missing). -f repeats and is read in order: a
file, a directory's .yaml, .yml and .json files (its subdirectories too with -R, --recursive), or -
for standard input. -k DIR instead builds the kustomization in DIR as the controller does: no remote bases, no plugins;
with --kustomize-binary, else APPLYSET_KUSTOMIZE_BINARY, else kustomize on PATH, else kubectl
kustomize, and the --kustomize-timeout and --kustomize-max-memory limits of the controller.
--oci oci://HOST/REPO (--tag TAG | --digest sha256:...) [--path DIR] [--insecure] [--verify-key FILE.pub ...]
instead fetches an OCI artifact (flux push artifact, oras push) as the controller fetches one, into a
temporary directory removed afterwards, and reads --path in it (default its root) as -k DIR when it
holds a kustomization, else as -f DIR (-R, --exclude). --insecure is plain HTTP; each --verify-key is
a cosign public key, one of which must have signed the artifact (none: not verified). Registry
credentials are the "auths" of $DOCKER_CONFIG/config.json, else ~/.docker/config.json, each sent only
to its host (credential helpers are not read). --oci-max-layer-bytes 50Mi, --oci-max-expanded-bytes
200Mi, --oci-max-files 10000 and --oci-max-file-bytes 10Mi bound the artifact, as in the controller.
A failure to fetch it is one line naming the artifact, exit 2, and nothing is written.
--helm-chart DIR|REPO/NAME|oci://HOST/PATH/NAME [--repo URL] [--version RANGE] [--plain-http]
[--values FILE ...] [--set KEY=VALUE ...] [--release-name NAME] [--include-crds=false] [--prune-crds]
[--skip-tests=false] instead applies what helm template renders of the chart, as the controller
renders an ApplySet's spec.helm. A chart that is not a directory is fetched first, as the controller
fetches one: from a registry (oci://, --plain-http for HTTP), from the repository --repo URL names,
or REPO/NAME from a repository of helm's repositories.yaml (helm repo add; its username and password
sent to that host only); --version is a semver range, default the highest stable version. The chart
has the --oci-max-* defaults; the CRDs of its crds/ are kept when it drops them (--prune-crds prunes
them). The render: --helm-binary (else APPLYSET_HELM_BINARY, else helm on
PATH), no cluster access, network or plugins, the --kustomize-* limits, dependencies vendored in
charts/, and .Capabilities those of the target cluster (its version and API versions). The release is --release-name, else the --applyset name; its namespace is the one the objects
go to (-n, else the context's). --values files are given in order, then --set (helm's own syntax);
a sops-encrypted values file is decrypted as -f files are.
With --prune, objects the set applied before and that are in none of the files are deleted, if this
set still owns them. --dry-run prints what apply would do, in kubectl's words
(configmap/x created (dry run)), with the field-level changes and the prunes, and writes nothing.
--kubeconfig, else every file of KUBECONFIG merged as kubectl merges them, else ~/.kube/config;
--context picks another context. --field-manager (default kubectl-client-side-apply) and --validate
(default strict) are accepted as kubectl accepts them. A flag other than -f given twice is an error.
An object that exists without an apply-owner is taken over, as kubectl does, and its line says
(adopted); --adopt=false leaves it untouched and reports a conflict instead. --concurrency N (1-128,
default 16) is how many objects of one wave are written at once, and how many reads are in flight.
A sops-encrypted file is decrypted with the age identities of SOPS_AGE_KEY, SOPS_AGE_KEY_FILE,
~/.config/sops/age/keys.txt and --decryption-key-file PATH (repeats); with none, or one that does not
open it, the whole input is refused before anything is written (-k builds it in
--decryption-scratch-dir, default /dev/shm, which must be memory-backed).
Exit codes: 0 ok, 1 some objects failed or conflicted, 2 bad input (nothing written), 3 failure.
`;

/** `applyset apply`: the engine on files and directories, with a ConfigMap as the apply-config object. */
export const applyCommand: Command = async (argv, io) => {
  const flags = parseApplySetFlags(argv, io, {
    command: 'apply',
    specs: applyFlagSpecs,
    usage,
    pruneByDefault: false,
  });
  if (typeof flags === 'number') return flags;
  // The engine and the Kubernetes client load only now: `--help` and a usage error do not wait for them.
  const { runApplySet } = await import('./run-apply-set.js');
  const progress = createProgressLine(io.stderr);
  const run = await runApplySet('apply', flags, io, {
    dryRun: flags.dryRun,
    prune: flags.prune,
    onProgress: progress.update,
  }).finally(progress.end);
  if (typeof run === 'number') return run;
  const { result } = run;
  for (const outcome of result.outcomes) writeOutcome(outcome, io, flags.dryRun);
  io.stdout.write(`${summaryLine(result, flags.dryRun)}\n`);
  // --wait: every object that did not become healthy, and why (`1 of 3 replicas available`).
  const unhealthy = (result.health ?? []).filter((report) => report.status !== 'Current');
  for (const report of unhealthy) {
    io.stderr.write(`error: ${where(report.ref)} is not ready (${report.status}): ${report.message}\n`);
  }
  if (result.healthTimedOut === true) {
    io.stderr.write(`error: timed out waiting for ${unhealthy.length} object(s) to become ready\n`);
  }
  return result.outcomes.some((o) => o.action === 'failed' || o.action === 'conflict') || unhealthy.length > 0
    ? ExitCode.partialFailure
    : ExitCode.ok;
};

/** `deployment.apps/web`, `configmap/x`: the name kubectl prints in its per-object lines. */
export function kubectlName(ref: ObjectRef): string {
  const type = ref.group === '' ? ref.kind.toLowerCase() : `${ref.kind.toLowerCase()}.${ref.group}`;
  return `${type}/${ref.name}`;
}

function where(ref: ObjectRef): string {
  return ref.namespace === '' ? kubectlName(ref) : `${kubectlName(ref)} (namespace ${ref.namespace})`;
}

/** One line per object in kubectl's words; a dry run's lines say `(dry run)` as kubectl's do. */
function writeOutcome(outcome: ObjectOutcome, io: CliIo, dryRun: boolean): void {
  const suffix = dryRun ? ' (dry run)' : '';
  const name = kubectlName(outcome.ref);
  switch (outcome.action) {
    case 'created':
    case 'configured':
    case 'unchanged':
    case 'pruned':
      // kubectl prints the server's warnings on stderr as they arrive, before the object's line.
      for (const warning of outcome.warnings ?? []) io.stderr.write(`Warning: ${warning}\n`);
      // kubectl's word for a server-side apply, with why it was one.
      if (
        outcome.serverSide !== undefined &&
        (outcome.action === 'created' || outcome.action === 'configured')
      ) {
        io.stdout.write(`${name} serverside-applied (${outcome.serverSide})${suffix}\n`);
      } else {
        io.stdout.write(
          `${name} ${outcome.action}${outcome.adopted === true ? ' (adopted)' : ''}${suffix}\n`,
        );
      }
      break;
    case 'would-create':
      io.stdout.write(`${name} created${suffix}\n`);
      break;
    case 'would-configure':
      // A server-side dry run's warnings, as kubectl apply --dry-run=server prints them.
      for (const warning of outcome.warnings ?? []) io.stderr.write(`Warning: ${warning}\n`);
      io.stdout.write(`${name} configured${suffix}\n`);
      for (const line of outcome.diff ?? []) io.stdout.write(`    ${line}\n`);
      break;
    case 'would-prune':
      io.stdout.write(`${name} pruned${suffix}\n`);
      break;
    case 'prune-skipped':
      io.stdout.write(`${name} not pruned${suffix}: ${outcome.reason}\n`);
      break;
    case 'conflict':
    case 'failed': {
      const from = outcome.source === undefined ? '' : `${describeManifestSource(outcome.source)}: `;
      io.stderr.write(`error: ${from}${where(outcome.ref)}: ${outcome.message}\n`);
      break;
    }
  }
}

function summaryLine(result: ApplySetResult, dryRun: boolean): string {
  const count = (action: ObjectOutcome['action']) =>
    result.outcomes.filter((o) => o.action === action).length;
  if (dryRun) {
    return (
      `dry run: ${count('would-create')} to create, ${count('would-configure')} to configure, ` +
      `${count('unchanged')} unchanged, ${count('would-prune')} to prune, ` +
      `${count('prune-skipped')} not pruned, ${count('conflict') + count('failed')} conflicts or errors; ` +
      'nothing was written'
    );
  }
  return (
    `${count('created')} created, ${count('configured')} configured, ${count('unchanged')} unchanged, ` +
    `${count('pruned')} pruned, ${count('prune-skipped')} not pruned, ${count('conflict')} conflicts, ` +
    `${count('failed')} failed`
  );
}

/** Sets at most this large finish before a progress line would help. */
const MIN_OBJECTS_FOR_PROGRESS = 100;

export interface ProgressLine {
  readonly update: (progress: ApplySetProgress) => void;
  /** Erases the line, so the per-object output that follows starts on a clean line. */
  readonly end: () => void;
}

/**
 * One line on a terminal's stderr, rewritten in place (`applied 340/1000, pruned 12/40`), for sets of
 * more than 100 objects. Never on a pipe or a file: a log must not fill with carriage returns.
 */
export function createProgressLine(
  stderr: NodeJS.WritableStream & { readonly isTTY?: boolean },
): ProgressLine {
  let shown = '';
  return {
    update: (progress) => {
      if (stderr.isTTY !== true || progress.toApply <= MIN_OBJECTS_FOR_PROGRESS) return;
      const text = formatProgress(progress);
      if (text === shown) return;
      shown = text;
      stderr.write(`\r\x1b[K${text}`);
    },
    end: () => {
      if (shown !== '') stderr.write('\r\x1b[K');
      shown = '';
    },
  };
}

export function formatProgress(progress: ApplySetProgress): string {
  const applied = `applied ${progress.applied}/${progress.toApply}`;
  return progress.toPrune === 0 ? applied : `${applied}, pruned ${progress.pruned}/${progress.toPrune}`;
}

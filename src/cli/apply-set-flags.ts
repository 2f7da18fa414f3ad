import { parseDuration } from '../api/durations.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { CliIo } from './cli-io.js';
import { ExitCode } from './exit-codes.js';
import { KUSTOMIZE_OPTIONS, kustomizeFlagsConfig } from './kustomize-flags.js';
import { checkReleaseName, HELM_FLAGS, helmInputOf, type HelmInput } from './helm-flags.js';
import { OCI_FLAGS, ociInputOf, type OciInput } from './oci-flags.js';
import {
  flagIsTrue,
  parseCommandLine,
  single,
  UsageError,
  type FlagSpecs,
  type ParsedFlags,
} from './parse-command-line.js';

/** What `apply` and `diff` were asked to do, once the command line was read. */
export interface ApplySetFlags {
  /** Every `-f`, in the order given; `-` is standard input. */
  readonly filenames: readonly string[];
  /** `-k DIR`: the objects are what `kustomize build DIR` makes (docs/kustomize.md); never with `-f`. */
  readonly kustomize: string | undefined;
  /** `--oci URL (--tag T | --digest D)`: an OCI artifact's files instead of `-f` or `-k`. */
  readonly oci: OciInput | undefined;
  /** `--helm-chart CHART [--values F] [--set k=v]`: what `helm template` renders of a chart (on disk, or fetched). */
  readonly helm: HelmInput | undefined;
  /** How `-k` runs kustomize: `--kustomize-binary` (else APPLYSET_KUSTOMIZE_BINARY) and its limits, as the controller's flags. */
  readonly kustomizeOptions: KustomizeOptions;
  readonly recursive: boolean;
  readonly applyset: string;
  readonly namespace: string | undefined;
  readonly prune: boolean;
  readonly dryRun: boolean;
  readonly allowEmpty: boolean;
  readonly force: boolean;
  /** Take over objects that exist without an apply-owner (kubectl's behaviour); `--adopt=false` refuses. */
  readonly adopt: boolean;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly fieldManager: string;
  readonly fieldValidation: 'strict' | 'warn' | 'ignore';
  /** `--exclude PATTERN` (repeats): gitignore-style patterns of files to leave out of `-f` directories. */
  readonly exclude: readonly string[];
  /** `--wait`: how long to wait for the objects to become healthy after applying; undefined: no wait. */
  readonly waitTimeoutMs: number | undefined;
  /** `--concurrency N` (apply): objects of one wave written at once, and reads in flight. */
  readonly concurrency: number;
  /** `--decryption-key-file PATH` (repeats): age key files for sops files, besides sops's own sources. */
  readonly decryptionKeyFiles: readonly string[];
  /** `--decryption-scratch-dir DIR`: the memory-backed directory a `-k` build with sops files runs in. */
  readonly decryptionScratchDir: string | undefined;
}

/** The engine's own default: what `apply` did before the flag existed. */
const DEFAULT_APPLY_CONCURRENCY = 16;
/** Past this, more requests at once only queue up in the API server's priority and fairness. */
const MAX_APPLY_CONCURRENCY = 128;

/** The flags `apply` and `diff` share; only `-f` repeats, as in kubectl. */
const commonFlags: FlagSpecs = {
  filename: { type: 'string', short: 'f', repeats: true },
  kustomize: { type: 'string', short: 'k' },
  ...KUSTOMIZE_OPTIONS,
  ...OCI_FLAGS,
  ...HELM_FLAGS,
  exclude: { type: 'string', repeats: true },
  recursive: { type: 'boolean', short: 'R' },
  applyset: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  prune: { type: 'boolean' },
  'allow-empty': { type: 'boolean' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'field-manager': { type: 'string' },
  validate: { type: 'optional-value', bare: 'strict' },
  'decryption-key-file': { type: 'string', repeats: true },
  'decryption-scratch-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export const applyFlagSpecs: FlagSpecs = {
  ...commonFlags,
  // kubectl's --dry-run takes none|client|server; bare, it was kubectl's old spelling of client.
  'dry-run': { type: 'optional-value', bare: 'client' },
  force: { type: 'boolean' },
  adopt: { type: 'boolean' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  concurrency: { type: 'string' },
};

export const diffFlagSpecs: FlagSpecs = commonFlags;

export interface ParseApplySetOptions {
  readonly command: 'apply' | 'diff';
  readonly specs: FlagSpecs;
  readonly usage: string;
  /** `diff` shows the prunes unless told `--prune=false`; `apply` prunes only with `--prune`. */
  readonly pruneByDefault: boolean;
}

/** Parses `apply` or `diff` flags; prints help or the usage error and returns the exit code instead. */
export function parseApplySetFlags(
  argv: readonly string[],
  io: CliIo,
  options: ParseApplySetOptions,
): ApplySetFlags | number {
  try {
    const flags = parseCommandLine(argv, options.specs);
    if (flagIsTrue(flags, 'help')) {
      io.stdout.write(options.usage);
      return ExitCode.ok;
    }
    return toApplySetFlags(flags, options.pruneByDefault, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`applyset ${options.command}: ${error.message}\n\n${options.usage}`);
    return ExitCode.badInput;
  }
}

function toApplySetFlags(flags: ParsedFlags, pruneByDefault: boolean, env: CliIo['env']): ApplySetFlags {
  const filenames = flags.get('filename') ?? [];
  const kustomize = single(flags, 'kustomize');
  // kubectl's own words for both at once.
  if (kustomize !== undefined && filenames.length > 0)
    throw new UsageError('only one of -f or -k can be specified');
  if (kustomize === '') throw new UsageError('-k needs a directory, got ""');
  if (flags.has('oci') && (kustomize !== undefined || filenames.length > 0)) {
    throw new UsageError('--oci cannot be combined with -f or -k: give one input');
  }
  const oci = ociInputOf(flags);
  const helm = helmInputOf(flags);
  const inputs = [filenames.length > 0, kustomize !== undefined, oci !== undefined, helm !== undefined];
  if (helm !== undefined && inputs.filter(Boolean).length > 1) {
    throw new UsageError('--helm-chart cannot be combined with -f, -k or --oci: give one input');
  }
  if (!inputs.includes(true)) {
    throw new UsageError(
      '-f FILENAME, -k DIR, --oci URL or --helm-chart CHART is required (a file, a directory, or -; a kustomization directory; an OCI artifact; a Helm chart)',
    );
  }
  if (filenames.includes('')) throw new UsageError('-f needs a file name, got ""');
  const given = single(flags, 'applyset');
  if (given === undefined) throw new UsageError('--applyset NAME is required');
  // kubectl's --applyset takes `[RESOURCE][.GROUP]/NAME`; the command's parent is always a ConfigMap.
  const applyset = given.replace(/^(configmap|configmaps)\//, '');
  if (applyset === '' || applyset.includes('/')) {
    throw new UsageError(`--applyset must name a ConfigMap (NAME or configmap/NAME), got "${given}"`);
  }
  const namespace = single(flags, 'namespace');
  if (namespace === '') throw new UsageError('-n needs a namespace, got ""');
  // The release is named as an ApplySet's is: by the set, unless told otherwise.
  if (helm !== undefined && helm.releaseName === undefined)
    checkReleaseName(applyset, '--applyset (the release name without --release-name)');
  return {
    filenames,
    kustomize,
    oci,
    helm,
    kustomizeOptions: kustomizeFlagsConfig(flags, env),
    recursive: flagIsTrue(flags, 'recursive'),
    applyset,
    namespace,
    prune: flagIsTrue(flags, 'prune', pruneByDefault),
    dryRun: dryRunOf(single(flags, 'dry-run')),
    allowEmpty: flagIsTrue(flags, 'allow-empty'),
    force: flagIsTrue(flags, 'force'),
    adopt: flagIsTrue(flags, 'adopt', true),
    kubeconfig: single(flags, 'kubeconfig'),
    context: single(flags, 'context'),
    fieldManager: nonEmpty(single(flags, 'field-manager'), '--field-manager') ?? 'kubectl-client-side-apply',
    fieldValidation: validationOf(single(flags, 'validate')),
    waitTimeoutMs: waitOf(flags),
    exclude: flags.get('exclude') ?? [],
    concurrency: concurrencyOf(single(flags, 'concurrency')),
    decryptionKeyFiles: flags.get('decryption-key-file') ?? [],
    decryptionScratchDir: nonEmpty(single(flags, 'decryption-scratch-dir'), '--decryption-scratch-dir'),
  };
}

function concurrencyOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_APPLY_CONCURRENCY;
  const concurrency = Number(value);
  if (!/^\d+$/.test(value) || concurrency < 1 || concurrency > MAX_APPLY_CONCURRENCY) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to ${MAX_APPLY_CONCURRENCY}, got ${JSON.stringify(value)}`,
    );
  }
  return concurrency;
}

/** `--wait [--timeout 5m]`: a timeout alone is refused, as it would mean nothing. */
function waitOf(flags: ParsedFlags): number | undefined {
  const timeout = single(flags, 'timeout');
  if (!flagIsTrue(flags, 'wait')) {
    if (timeout !== undefined) throw new UsageError('--timeout is for --wait');
    return undefined;
  }
  if (timeout === undefined) return 5 * 60_000;
  try {
    return parseDuration(timeout);
  } catch {
    throw new UsageError(`--timeout: not a duration: ${JSON.stringify(timeout)} (e.g. 90s, 5m)`);
  }
}

function dryRunOf(value: string | undefined): boolean {
  switch (value) {
    case undefined:
    case 'none':
      return false;
    case 'client':
      return true;
    case 'server':
      throw new UsageError('--dry-run=server is not supported yet; --dry-run=client computes the same plan');
    default:
      throw new UsageError(`invalid --dry-run value "${value}": must be "none", "client" or "server"`);
  }
}

/** kubectl's --validate: true means strict, false means ignore; strict is the default. */
function validationOf(value: string | undefined): ApplySetFlags['fieldValidation'] {
  switch (value) {
    case undefined:
    case 'true':
    case 'strict':
      return 'strict';
    case 'warn':
      return 'warn';
    case 'false':
    case 'ignore':
      return 'ignore';
    default:
      throw new UsageError(
        `invalid --validate value "${value}": must be "strict" (or true), "warn" or "ignore" (or false)`,
      );
  }
}

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === '') throw new UsageError(`${flag} needs a value, got ""`);
  return value;
}

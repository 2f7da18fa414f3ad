import { parseDuration } from '../api/durations.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, type KustomizeOptions } from '../kustomize/run-kustomize.js';
import { parseSizeFlag } from './git-limit-flags.js';
import { single, UsageError, type ParsedFlags } from './parse-command-line.js';

/** How the controller runs kustomize: parseArgs options, parsed below. */
export const KUSTOMIZE_OPTIONS = {
  'kustomize-binary': { type: 'string' },
  'kustomize-timeout': { type: 'string' },
  'kustomize-max-memory': { type: 'string' },
  'decryption-scratch-dir': { type: 'string' },
  'helm-binary': { type: 'string' },
} as const;

export const KUSTOMIZE_USAGE = `Kustomize: a spec.source.path holding kustomization.yaml (.yml, Kustomization) is built with
kustomize (--kustomize-binary, else APPLYSET_KUSTOMIZE_BINARY, else kustomize on PATH, else kubectl
kustomize) without network or plugins; one build may run --kustomize-timeout (60s) and use
--kustomize-max-memory (256Mi) before it is stopped. A build that reads decrypted sops files is written
to --decryption-scratch-dir (default /dev/shm), which must be memory-backed (tmpfs; the chart mounts an
emptyDir of medium Memory): never to a disk.
Helm: with spec.helm, spec.source.path is a chart rendered with helm template (--helm-binary, else
APPLYSET_HELM_BINARY, else helm on PATH) under the same sandbox and limits.
`;

type KustomizeFlag = keyof typeof KUSTOMIZE_OPTIONS;

/** The environment variable every command reads when --kustomize-binary is not given. */
const KUSTOMIZE_BINARY_ENV = 'APPLYSET_KUSTOMIZE_BINARY';
/** The environment variable every command reads when --helm-binary is not given. */
const HELM_BINARY_ENV = 'APPLYSET_HELM_BINARY';

/**
 * The kustomize flags of any command (`controller`, `apply -k`, `diff -k`, `diff --applyset-object`,
 * `ui`) as its kustomize options; a flag not given keeps its default. The binary is the one setting
 * of every command: --kustomize-binary, else APPLYSET_KUSTOMIZE_BINARY, else none (`kustomize` on
 * PATH, else `kubectl kustomize`: runKustomize looks).
 */
export function kustomizeConfig(
  values: Partial<Record<KustomizeFlag, string>>,
  env: Readonly<Record<string, string | undefined>>,
): KustomizeOptions {
  const binary = values['kustomize-binary'];
  if (binary === '') throw new UsageError('--kustomize-binary needs a path or a name, got ""');
  const helmBinary = values['helm-binary'];
  if (helmBinary === '') throw new UsageError('--helm-binary needs a path or a name, got ""');
  const timeout = values['kustomize-timeout'];
  let timeoutMs = DEFAULT_KUSTOMIZE_OPTIONS.timeoutMs;
  if (timeout !== undefined) {
    try {
      timeoutMs = parseDuration(timeout);
    } catch {
      throw new UsageError(`--kustomize-timeout: not a duration: ${JSON.stringify(timeout)} (e.g. 30s, 2m)`);
    }
    if (timeoutMs <= 0) throw new UsageError('--kustomize-timeout must be longer than 0s');
  }
  const memory = values['kustomize-max-memory'];
  const scratch = values['decryption-scratch-dir'];
  if (scratch !== undefined && !scratch.startsWith('/')) {
    throw new UsageError(`--decryption-scratch-dir needs an absolute path, got ${JSON.stringify(scratch)}`);
  }
  return {
    ...(scratch === undefined ? {} : { decryptionScratchDir: scratch }),
    // An empty variable counts as unset, as a shell's `APPLYSET_KUSTOMIZE_BINARY= applyset ...` means.
    binary: binary ?? (env[KUSTOMIZE_BINARY_ENV] || undefined),
    helmBinary: helmBinary ?? (env[HELM_BINARY_ENV] || undefined),
    timeoutMs,
    maxMemoryBytes:
      memory === undefined
        ? DEFAULT_KUSTOMIZE_OPTIONS.maxMemoryBytes
        : parseSizeFlag('kustomize-max-memory', memory),
  };
}

/** The kustomize flags of a command read with parseCommandLine (all but the controller). */
export function kustomizeFlagsConfig(
  flags: ParsedFlags,
  env: Readonly<Record<string, string | undefined>>,
): KustomizeOptions {
  return kustomizeConfig(
    {
      'kustomize-binary': single(flags, 'kustomize-binary'),
      'kustomize-timeout': single(flags, 'kustomize-timeout'),
      'kustomize-max-memory': single(flags, 'kustomize-max-memory'),
      'decryption-scratch-dir': single(flags, 'decryption-scratch-dir'),
      'helm-binary': single(flags, 'helm-binary'),
    },
    env,
  );
}

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
} as const;

export const KUSTOMIZE_USAGE = `Kustomize: a spec.source.path holding kustomization.yaml (.yml, Kustomization) is built with
kustomize (--kustomize-binary, default kustomize on PATH) without network or plugins; one build may run
--kustomize-timeout (60s) and use --kustomize-max-memory (256Mi) before it is stopped. A build that
reads decrypted sops files is written to --decryption-scratch-dir (default /dev/shm), which must be
memory-backed (tmpfs; the chart mounts an emptyDir of medium Memory): never to a disk.
`;

type KustomizeFlag = keyof typeof KUSTOMIZE_OPTIONS;

/** The flags as the controller's kustomize options; a flag not given keeps its default. */
export function kustomizeConfig(values: Partial<Record<KustomizeFlag, string>>): KustomizeOptions {
  const binary = values['kustomize-binary'];
  if (binary === '') throw new UsageError('--kustomize-binary needs a path or a name, got ""');
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
    binary: binary ?? DEFAULT_KUSTOMIZE_OPTIONS.binary,
    timeoutMs,
    maxMemoryBytes:
      memory === undefined
        ? DEFAULT_KUSTOMIZE_OPTIONS.maxMemoryBytes
        : parseSizeFlag('kustomize-max-memory', memory),
  };
}

/**
 * The kustomize flags of a preview command (`applyset diff --applyset-object`, `applyset ui`), parsed
 * as the controller's; without --kustomize-binary, APPLYSET_KUSTOMIZE_BINARY names kustomize, as for
 * `applyset apply -k`.
 */
export function previewKustomizeConfig(
  flags: ParsedFlags,
  env: Readonly<Record<string, string | undefined>>,
): KustomizeOptions {
  return kustomizeConfig({
    'kustomize-binary': single(flags, 'kustomize-binary') ?? (env['APPLYSET_KUSTOMIZE_BINARY'] || undefined),
    'kustomize-timeout': single(flags, 'kustomize-timeout'),
    'kustomize-max-memory': single(flags, 'kustomize-max-memory'),
    'decryption-scratch-dir': single(flags, 'decryption-scratch-dir'),
  });
}

/**
 * The one parse door's bounds: how much of each kind of tenant input the controller reads, how deep it
 * may nest and how far its YAML aliases may expand it. A Git repository, a Secret or a webhook body is
 * written by whoever controls it; one of a few hundred bytes must not take the heap of a controller every
 * tenant shares (docs/multi-tenancy.md#the-boundary-door-by-door).
 */
export interface InputBounds {
  /** UTF-8 bytes of the text, checked before anything parses it. */
  readonly maxBytes: number;
  /** Collections inside collections; a recursive walk of a deeper value could exhaust the stack. */
  readonly maxDepth: number;
  /** Characters of every key and scalar once aliases are expanded (one per node at least). */
  readonly maxExpandedBytes: number;
}

/** Every kind of tenant input the controller parses, by what reads it. */
export type InputKind =
  | 'manifest'
  | 'sops'
  | 'kustomization'
  | 'kubeconfig'
  | 'push-event'
  | 'registry'
  | 'helm-index'
  | 'forge-api'
  /** `--health-check-exprs`: the chart's health.checkExprs as JSON. */
  | 'health-check-exprs';

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * go-yaml (kubectl's, kustomize's and sops's reader) refuses nesting past 10,000 levels; no manifest,
 * kustomization or kubeconfig comes near 100, and the walks after the parse are recursive, so 1,000 is
 * both far above real files and far below what the stack holds.
 */
const MAX_DEPTH = 1000;

/**
 * - manifest: 10 MiB per file (manifest-limits.ts says why), and as much expanded.
 * - sops: a sops file is a manifest file, read before the manifest reader sees it.
 * - kustomization: real ones are a few KiB; 1 MiB still holds inline patches of large objects.
 * - kubeconfig: the API server stores a Secret of at most 1 MiB.
 * - push-event: forge payloads are a few KiB to a few hundred (a push of many commits).
 * - registry: an OCI registry's JSON answers (a manifest, a token, a tag list); the distribution spec
 *   lets a registry refuse manifests over 4 MiB, and real ones are a few KiB.
 * - helm-index: a Helm repository's index.yaml lists every version of every chart; large public ones
 *   weigh a few MiB, so 16 MiB (the fetch is bounded the same, HELM_INDEX_MAX_BYTES).
 * - forge-api: a forge API's small JSON answers (a GitHub App's installation, its token): 64 KiB.
 */
export const INPUT_BOUNDS: Readonly<Record<InputKind, InputBounds>> = {
  manifest: { maxBytes: 10 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 10 * MIB },
  sops: { maxBytes: 10 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 10 * MIB },
  kustomization: { maxBytes: 1 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 4 * MIB },
  kubeconfig: { maxBytes: 1 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 4 * MIB },
  'push-event': { maxBytes: 1 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 1 * MIB },
  registry: { maxBytes: 4 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 4 * MIB },
  'helm-index': { maxBytes: 16 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 32 * MIB },
  'forge-api': { maxBytes: 64 * KIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 64 * KIB },
  'health-check-exprs': { maxBytes: 1 * MIB, maxDepth: MAX_DEPTH, maxExpandedBytes: 1 * MIB },
};

/** Why the door refused a text: a bound it breaks, or it is not YAML (or JSON) at all. */
export type InputProblem = 'too-large' | 'too-deep' | 'excessive-aliasing' | 'expands-too-large' | 'syntax';

/**
 * Input refused by the parse door, before anything walked it. The message names the input (`source`)
 * and why, with the line and column for a syntax error, and never quotes the text (a Secret's value,
 * maybe).
 */
export class InputParseError extends Error {
  override readonly name = 'InputParseError';
  readonly code = 'INPUT_REFUSED';
  constructor(
    readonly source: string,
    readonly problem: InputProblem,
    readonly detail: string,
  ) {
    super(`${source}: ${detail}`);
  }
}

/** The refusal of a text over `bounds.maxBytes`; undefined when it may be parsed. */
export function checkInputSize(
  text: string,
  source: string,
  bounds: InputBounds,
): InputParseError | undefined {
  // Each UTF-16 unit is at most three UTF-8 bytes: most texts are decided without encoding them.
  if (text.length * 3 <= bounds.maxBytes) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= bounds.maxBytes) return undefined;
  return new InputParseError(
    source,
    'too-large',
    `is ${formatSize(bytes)}, over the limit of ${formatSize(bounds.maxBytes)}`,
  );
}

export function formatSize(bytes: number): string {
  if (bytes >= MIB) return `${Number((bytes / MIB).toFixed(1))} MiB`;
  if (bytes >= KIB) return `${Number((bytes / KIB).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}

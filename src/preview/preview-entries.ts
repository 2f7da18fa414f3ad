/**
 * The engine's dry-run outcomes as a preview's entries (pure): what the controller's run of the same
 * request would create, configure, adopt, prune or hold back, and what it would fail on.
 */
import type { ObjectOutcome } from '../apply/apply-set-contract.js';
import { describeManifestSource } from '../manifests/manifest-error.js';
import { driftedCondition } from '../api/safe-mode-status.js';
import { objectRefKey } from '../manifests/object-ref.js';
import type { ApplySetPreview, PreviewDriftReport, PreviewEntry, PreviewStop } from './applyset-preview.js';

/** What the spec decides about the dry run's outcomes, where the engine's dry run cannot. */
export interface PreviewPolicy {
  /** spec.prune is false or DryRun: every prune is held back with this reason. */
  readonly heldBack?: string;
  /**
   * The run's prunes are over spec.pruneLimit, as the engine judged them (PruneLimitExceededError):
   * the limit as a count, and what the ApplySet would say. Unset within the limit, without one, or
   * for an approved revision.
   */
  readonly overLimit?: { readonly limit: number; readonly message: string };
}

export interface PreviewOutcome {
  readonly entries: readonly PreviewEntry[];
  readonly unchanged: number;
  readonly stopped?: PreviewStop;
}

/** The outcomes of a dry run as entries, in the engine's order; prunes judged against `policy`. */
export function previewEntries(outcomes: readonly ObjectOutcome[], policy: PreviewPolicy): PreviewOutcome {
  const entries: PreviewEntry[] = [];
  let unchanged = 0;
  for (const outcome of outcomes) {
    const entry = entryOf(outcome);
    if (entry === undefined) unchanged += 1;
    else entries.push(entry);
  }
  const prunes = entries.filter((entry) => entry.kind === 'prune');
  if (policy.heldBack !== undefined) {
    const reason = policy.heldBack;
    return { entries: entries.map((e) => (e.kind === 'prune' ? holdBack(e, reason) : e)), unchanged };
  }
  if (policy.overLimit === undefined) return { entries, unchanged };
  // Over the limit the controller applies nothing and deletes nothing: the whole run stalls.
  const { limit, message } = policy.overLimit;
  const stopped: PreviewStop = { reason: 'PruneLimitExceeded', message };
  const reason = `over spec.pruneLimit (${prunes.length} prunes, limit ${limit})`;
  return {
    entries: entries.map((e) => (e.kind === 'prune' ? holdBack(e, reason) : e)),
    unchanged,
    stopped,
  };
}

function holdBack(entry: PreviewEntry & { kind: 'prune' }, reason: string): PreviewEntry {
  return { kind: 'held-back', ref: entry.ref, reason };
}

/** One outcome as an entry; undefined for an object left as it is. */
function entryOf(outcome: ObjectOutcome): PreviewEntry | undefined {
  const { ref } = outcome;
  switch (outcome.action) {
    case 'would-create':
      return { kind: 'create', ref, ...serverSideOf(outcome.serverSide) };
    case 'would-configure': {
      const changes = outcome.diff ?? [];
      if (outcome.adopted === true) return { kind: 'adopt', ref, changes };
      return { kind: 'configure', ref, changes, ...serverSideOf(outcome.serverSide) };
    }
    case 'unchanged':
      // driftMode Warn: the engine found drift and left it alone, as the controller's run would.
      if (outcome.drift !== undefined && outcome.drift.length > 0)
        return { kind: 'drift', ref, fields: outcome.drift };
      return outcome.adopted === true ? { kind: 'adopt', ref, changes: [] } : undefined;
    case 'would-prune':
      return { kind: 'prune', ref };
    case 'prune-skipped':
      return { kind: 'held-back', ref, reason: outcome.reason };
    case 'conflict':
    case 'failed':
      return {
        kind: 'error',
        ref,
        message: outcome.message,
        ...(outcome.source === undefined ? {} : { file: describeManifestSource(outcome.source) }),
      };
    // A dry run writes nothing; these are a real run's, counted as nothing to preview.
    case 'created':
    case 'configured':
    case 'pruned':
      return undefined;
  }
}

function serverSideOf(reason: string | undefined): { serverSide?: string } {
  return reason === undefined ? {} : { serverSide: reason };
}

/** How many entries of each kind, for summaries. */
export type PreviewCounts = Readonly<Record<PreviewEntry['kind'], number>> & { readonly unchanged: number };

export function previewCounts(preview: Pick<ApplySetPreview, 'entries' | 'unchanged'>): PreviewCounts {
  const counts = { create: 0, configure: 0, adopt: 0, prune: 0, 'held-back': 0, drift: 0, error: 0 };
  for (const entry of preview.entries) counts[entry.kind] += 1;
  return { ...counts, unchanged: preview.unchanged };
}

/** Whether the run would write anything: a create, a change, an adoption or a deletion. */
export function previewChangesSomething(preview: Pick<ApplySetPreview, 'entries'>): boolean {
  return preview.entries.some(
    (entry) =>
      entry.kind === 'create' ||
      entry.kind === 'configure' ||
      entry.kind === 'prune' ||
      entry.kind === 'adopt',
  );
}

/**
 * The Drifted condition the controller would write for the drift entries, in its own words
 * (driftedCondition); undefined when there is none to report.
 */
export function driftReportOf(
  entries: readonly PreviewEntry[],
  revision: string,
): PreviewDriftReport | undefined {
  const drift = entries.flatMap((entry) =>
    entry.kind === 'drift' ? [{ object: objectRefKey(entry.ref), fields: entry.fields }] : [],
  );
  if (drift.length === 0) return undefined;
  const { reason, message } = driftedCondition(drift, revision);
  return { reason, message };
}

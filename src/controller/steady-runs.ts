/**
 * A reconcile at rest with nothing to do. Once a run in full has applied a revision and found every
 * object as the files want it, the next run on schedule reads the same files, merges them into the
 * same objects and reports the same thing: most of its CPU (the files read from Git, the YAML, the
 * three-way merges) is spent to learn that nothing changed. This memo lets it learn so from versions
 * instead: the ApplySet's resourceVersion (its spec, annotations and status), the revision, the
 * account, and the resourceVersion of every object it holds, which the API server changes on every
 * write of the object (an edit, a label, a status). When all of them are what the last run in full
 * saw, that run's outcome is the answer; when any differs, or a read fails, the run goes in full.
 *
 * The objects are still read, one request each (or one LIST for several of a kind, as the engine
 * reads them), or their versions heard from a watch of their collection where many sets share one
 * (member-watches.ts): drift is seen by the next reconcile, as before. What is not re-checked is
 * anything outside those versions, so the sets that depend on more are always run in full: sops
 * decryption (its keys live in a Secret), Helm charts (values from ConfigMaps, the cluster's
 * capabilities), remote clusters, and health checks of objects the set does not hold.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApplySet, ApplySetInventory, ResolvedApplySetSpec } from '../api/applyset-types.js';
import { APPLYSET_GROUP, APPLYSET_KIND } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { inventoryItemId, parseInventoryItemId } from '../api/status-inventory.js';
import { readLiveObjects, type ReadTarget } from '../apply/read-live-objects.js';
import { computeApplySetId } from '../inventory/applyset-id.js';
import { liveResourceVersion } from '../inventory/live-state.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { resourcePath, type KubeObjectApi, type ResourceLocation } from '../kube/kube-object-api.js';
import type { LiveState } from '../inventory/live-state.js';
import { LruMap } from '../kube/lru-map.js';
import type { RestMapper } from '../kube/rest-mapper.js';
import { objectRefKey, type ObjectRef } from '../manifests/object-ref.js';

/** What a run is keyed by, besides the objects' versions. */
export interface SteadyInputs {
  readonly applySet: ApplySet;
  readonly spec: ResolvedApplySetSpec;
  readonly revision: string;
  readonly user: string | undefined;
}

/** A run in full as it ended, for `settle`. */
interface SettledRun extends SteadyInputs {
  readonly outcome: ReconcileOutcome;
  readonly steady: boolean;
  readonly held?: readonly ObjectRef[] | undefined;
  readonly liveVersions?: ReadonlyMap<string, string> | undefined;
  /** The report wrote no status and recorded no event. */
  readonly quiet: boolean;
}

/** How the objects are read: as the set's account, with the controller's mapper. */
interface SteadyReads {
  readonly api: KubeObjectApi;
  readonly mapper: Pick<RestMapper, 'resolveGroupKind'>;
  readonly signal: AbortSignal;
  /**
   * The versions of some objects of one collection from a watch of it (member-watches.ts): null for
   * one the watch does not hold, undefined when there is no such watch (they are read then).
   */
  readonly watched?: (location: ResourceLocation, names: readonly string[]) => (string | null)[] | undefined;
}

export interface SteadyRuns {
  /** The last run's outcome when nothing it depended on changed since; undefined: run in full. */
  /** `reads` is asked for only when the set has a run kept: a set without one costs no allocation. */
  unchanged(
    key: string,
    inputs: SteadyInputs,
    reads: () => SteadyReads,
  ): Promise<ReconcileOutcome | undefined>;
  /** After a run in full: kept when it changed nothing and reported nothing new, dropped otherwise. */
  settle(key: string, run: SettledRun): void;
  forget(key: string): void;
}

interface SteadyRun {
  readonly applySetVersion: string;
  readonly revision: string;
  readonly user: string | undefined;
  /** The objects' resourceVersions in status.inventory's order, joined by spaces. */
  readonly versions: string;
  /** Shared by every set whose outcome is the same (a fleet at one revision: one instance). */
  readonly outcome: ReconcileOutcome;
}

/** Past this many ApplySets, the least recently reconciled are run in full again. */
const MAX_STEADY_RUNS = 100_000;
/** Distinct outcomes kept to share: one per revision and object count, for most fleets. */
const MAX_SHARED_OUTCOMES = 1_024;
/** As many reads at once as the engine's default. */
const READ_CONCURRENCY = 16;

export function createSteadyRuns(maxRuns = MAX_STEADY_RUNS): SteadyRuns {
  const runs = new LruMap<string, SteadyRun>(maxRuns);
  const outcomes = new LruMap<string, ReconcileOutcome>(MAX_SHARED_OUTCOMES);
  const shared = (outcome: ReconcileOutcome): ReconcileOutcome => {
    const key = JSON.stringify(outcome);
    const kept = outcomes.get(key);
    if (kept !== undefined && isDeepStrictEqual(kept, outcome)) return kept;
    outcomes.set(key, outcome);
    return outcome;
  };
  return {
    async unchanged(key, inputs, reads) {
      const run = runs.get(key);
      if (run === undefined || !sameInputs(run, inputs)) return undefined;
      const versions = await readVersions(inputs.applySet, reads());
      return versions === run.versions ? run.outcome : undefined;
    },
    settle(key, settled) {
      const versions = quietVersions(settled);
      if (versions === undefined) {
        runs.delete(key);
        return;
      }
      const { applySet, revision, user } = settled;
      const applySetVersion = applySet.metadata.resourceVersion ?? '';
      runs.set(key, { applySetVersion, revision, user, versions, outcome: shared(settled.outcome) });
    },
    forget: (key) => void runs.delete(key),
  };
}

/** Whether the set depends on nothing but its revision, its own spec and the objects it holds. */
function steadyEligible(spec: ResolvedApplySetSpec): boolean {
  return (
    spec.decryption === undefined &&
    spec.helm === undefined &&
    spec.kubeConfig === undefined &&
    spec.healthChecks.length === 0
  );
}

function sameInputs(run: SteadyRun, { applySet, spec, revision, user }: SteadyInputs): boolean {
  return (
    steadyEligible(spec) &&
    run.applySetVersion === applySet.metadata.resourceVersion &&
    run.revision === revision &&
    run.user === user
  );
}

/**
 * The versions of a run to keep: only for an eligible set whose run was steady, applied, found every
 * object unchanged, and reported nothing new; in the order of the status.inventory it left in place.
 */
function quietVersions(run: SettledRun): string | undefined {
  const { outcome, held, liveVersions } = run;
  if (!run.quiet || !run.steady || !steadyEligible(run.spec) || outcome.kind !== 'applied') return undefined;
  if (held === undefined || liveVersions === undefined || !changedNothing(outcome)) return undefined;
  const inventory = wholeInventory(run.applySet);
  if (inventory === undefined || inventory.items.length !== held.length) return undefined;
  const byId = new Map(held.map((ref) => [inventoryItemId(ref), liveVersions.get(objectRefKey(ref))]));
  const versions: string[] = [];
  for (const id of inventory.items) {
    const version = byId.get(id);
    if (version === undefined) return undefined;
    versions.push(version);
  }
  return versions.join(' ');
}

/** Every object unchanged, none adopted, drifted, applied server-side or kept for another set. */
function changedNothing(outcome: Extract<ReconcileOutcome, { kind: 'applied' }>): boolean {
  const { counts } = outcome;
  const quietCounts =
    counts.created === 0 &&
    counts.configured === 0 &&
    counts.pruned === 0 &&
    counts.failed === 0 &&
    counts.conflicts === 0;
  const noNews = [
    outcome.adopted,
    outcome.serverSide,
    outcome.keptForOthers,
    outcome.drift,
    outcome.corrections,
    outcome.wouldPrune,
  ].every((list) => list === undefined || list.length === 0);
  return quietCounts && noNews;
}

function wholeInventory(applySet: ApplySet): ApplySetInventory | undefined {
  const inventory = applySet.status?.inventory;
  return inventory === undefined || inventory.truncated ? undefined : inventory;
}

/** The versions the watches hold, by object key: of every target whose collection is watched. */
function watchedVersions(targets: readonly ReadTarget[], reads: SteadyReads): Map<string, string | null> {
  const known = new Map<string, string | null>();
  if (reads.watched === undefined) return known;
  const collections = new Map<string, { location: ResourceLocation; refs: ObjectRef[] }>();
  for (const { ref, mapping } of targets) {
    if (typeof mapping === 'string') continue;
    const location = {
      group: mapping.group,
      version: mapping.version,
      resource: mapping.resource,
      namespace: ref.namespace,
    };
    const key = resourcePath(location);
    const collection = collections.get(key) ?? { location, refs: [] };
    collection.refs.push(ref);
    collections.set(key, collection);
  }
  for (const { location, refs } of collections.values()) {
    const versions = reads.watched(
      location,
      refs.map((ref) => ref.name),
    );
    if (versions === undefined) continue;
    refs.forEach((ref, index) => known.set(objectRefKey(ref), versions[index] ?? null));
  }
  return known;
}

/**
 * The resourceVersions of the objects status.inventory names, in its order and joined as the memo
 * keeps them; undefined when one is missing, cannot be mapped or a read fails (the run in full tells).
 */
async function readVersions(applySet: ApplySet, reads: SteadyReads): Promise<string | undefined> {
  const inventory = wholeInventory(applySet);
  const refs = inventory?.items.map(parseInventoryItemId);
  if (refs === undefined || refs.some((ref) => ref === undefined)) return undefined;
  try {
    const targets: ReadTarget[] = [];
    for (const ref of refs as ObjectRef[]) {
      const mapping = await reads.mapper.resolveGroupKind(ref.group, ref.kind, reads.signal);
      targets.push({ ref, mapping });
    }
    const watched = watchedVersions(targets, reads);
    const unread = targets.filter((target) => !watched.has(objectRefKey(target.ref)));
    const { namespace, name } = applySet.metadata;
    const setId = computeApplySetId({ group: APPLYSET_GROUP, kind: APPLYSET_KIND, namespace, name });
    const { live } =
      unread.length === 0
        ? { live: new Map<string, LiveState>() }
        : await readLiveObjects(reads.api, unread, {
            concurrency: READ_CONCURRENCY,
            signal: reads.signal,
            filter: {
              labelSelector: `${MetadataKeys.applySetPartOf}=${setId}`,
              unfilteredNamespaces: new Set(),
            },
          });
    const versions: string[] = [];
    for (const target of targets) {
      const key = objectRefKey(target.ref);
      const state = live.get(key);
      const version = watched.has(key)
        ? watched.get(key)
        : state?.status === 'present'
          ? liveResourceVersion(state.object)
          : undefined;
      if (version === undefined || version === null) return undefined;
      versions.push(version);
    }
    return versions.join(' ');
  } catch {
    return undefined;
  }
}

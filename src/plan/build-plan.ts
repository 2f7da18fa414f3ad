import {
  groupIntoApplyWaves,
  groupIntoPruneWaves,
  isCustomResourceDefinition,
  isNamespace,
} from '../manifests/apply-waves.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { groupIntoSyncWaves, syncWaveOf } from '../manifests/sync-waves.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { describeObjectRef, objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import { differenceInventories, toInventory, unionInventories } from '../inventory/inventory.js';
import type { LiveState } from '../inventory/live-state.js';
import { mayApply, mayPrune } from '../inventory/ownership-policy.js';
import type { ApplyAction, PlanRefusal, PlanResult, PlanStep, PruneAction, PruneKeepReason } from './plan.js';

/** @internal test seam: the shape its tests build */
export interface PlanPolicy {
  /** uid of the apply-config object; undefined when it does not exist yet. */
  readonly ownerUid: string | undefined;
  /** Adopt live objects without an apply-owner (kubectl's behaviour). */
  readonly adopt: boolean;
  /** Delete what left the set. Without it the inventory only grows, as with `kubectl apply`. */
  readonly prune: boolean;
  /**
   * With prune: judge every candidate as a prune would, then keep what would be deleted (reason
   * `dry-run`), in the inventory too (spec.prune: DryRun).
   */
  readonly pruneDryRun?: boolean;
  /** Let an empty set prune everything it recorded (`--allow-empty`). */
  readonly allowEmpty: boolean;
  /** The apply-config object itself, which must not be a member of its own set. */
  readonly parent?: ObjectRef;
  /** Order by the objects' sync waves (applyset.dev/wave); false: the annotation means nothing (kubectl). */
  readonly syncWaves?: boolean;
}

export interface PlanInput {
  readonly desired: readonly ManifestObject[];
  readonly inventoryOld: readonly ObjectRef[];
  /**
   * What reads returned, keyed by `objectRefKey`, for the desired objects and the old inventory. A
   * ref with no entry was not read, which counts as `unknown`: never as absent.
   */
  readonly live: ReadonlyMap<string, LiveState>;
  readonly policy: PlanPolicy;
  /**
   * Other objects known to live in a namespace (for example from the LISTs made for the set's kinds).
   * A Namespace holding any of them that is not being deleted is not pruned. Optional: the plan
   * protects what it is told about.
   */
  readonly liveNamespaceMembers?: ReadonlyMap<string, readonly ObjectRef[]>;
}

const NOT_READ = new Error('the object was not read');

/**
 * Builds the whole run as data before anything is written (cli-utils' "the plan is data"), so it can
 * be printed, tested and dry-run: widen the inventory, apply in waves, prune in reverse waves, narrow
 * the inventory, write the hash.
 */
export function buildPlan(input: PlanInput): PlanResult {
  const { desired, policy } = input;
  const inventoryOld = toInventory(input.inventoryOld);
  const liveOf = (ref: ObjectRef): LiveState =>
    input.live.get(objectRefKey(ref)) ?? { status: 'unknown', error: NOT_READ };

  const refusals = refuse(input, inventoryOld.length);
  if (refusals.length > 0) return { ok: false, refusals };

  const applyActions = desired.map((object) => applyAction(object, liveOf(object.ref), policy));
  // A conflicting object is not ours: it does not enter the inventory (nor leave another's).
  const inventoryNew = toInventory(
    applyActions.filter((action) => action.type !== 'conflict').map((a) => a.ref),
  );

  const candidates = policy.prune
    ? differenceInventories(
        inventoryOld,
        desired.map((object) => object.ref),
      )
    : [];
  const judged = judgeSetRules(
    candidates.map((ref) => pruneAction(ref, liveOf(ref), policy.ownerUid)),
    desired,
    inventoryOld,
    input.liveNamespaceMembers,
  );
  const pruneActions =
    policy.pruneDryRun === true
      ? judged.map(
          (a): PruneAction => (a.type === 'delete' ? { type: 'skip', ref: a.ref, reason: 'dry-run' } : a),
        )
      : judged;

  const steps: PlanStep[] = [
    { type: 'widen-inventory', inventory: unionInventories(inventoryOld, inventoryNew) },
  ];
  const waveOf = (object: JsonObject | undefined) => (policy.syncWaves === true ? syncWaveOf(object) : 0);
  const syncWaves = groupIntoSyncWaves(applyActions, (action) => waveOf(action.object.manifest));
  for (const [index, { wave: syncWave, items: waveActions }] of syncWaves.entries()) {
    steps.push(...applySteps(waveActions));
    // Each sync wave is healthy before the next is applied (none to wait for with one wave).
    const next = syncWaves[index + 1];
    if (next !== undefined) {
      const refs = waveActions
        .filter((action) => action.type === 'create' || action.type === 'update')
        .map((action) => action.ref);
      const place = { position: index + 1, waves: syncWaves.length, next: next.wave };
      steps.push({ type: 'wait-for-sync-wave', wave: syncWave, refs, ...place });
    }
  }
  // Prunes in the reverse sync-wave order, as each object's live annotation says.
  const pruneSyncWaves = groupIntoSyncWaves(pruneActions, (action) =>
    action.type === 'delete' ? waveOf(action.live) : 0,
  ).reverse();
  for (const { items: waveActions } of pruneSyncWaves) {
    for (const { wave, items } of groupIntoPruneWaves(waveActions, (action) => action.ref)) {
      steps.push({ type: 'prune-wave', wave, actions: items });
    }
  }
  const retained = pruneActions.filter(
    (action) => action.type === 'skip' && keepsInventoryEntry(action.reason),
  );
  // Without prune nothing leaves the inventory: it is old ∪ new, so a later run with prune still
  // knows every object this set ever applied.
  const keep = policy.prune
    ? unionInventories(
        inventoryNew,
        retained.map((action) => action.ref),
      )
    : unionInventories(inventoryOld, inventoryNew);
  const deleting = toInventory(
    pruneActions.filter((action) => action.type === 'delete').map((action) => action.ref),
  );
  steps.push({ type: 'narrow-inventory', keep, deleting }, { type: 'write-hash' });

  return { ok: true, plan: { steps, inventoryOld, inventoryNew } };
}

/** One sync wave's applies, in the kind waves, each wave of CRDs awaited Established. */
function applySteps(actions: readonly ApplyAction[]): PlanStep[] {
  const steps: PlanStep[] = [];
  for (const { wave, items } of groupIntoApplyWaves(actions, (action) => action.ref)) {
    steps.push({ type: 'apply-wave', wave, actions: items });
    const crds = items
      .filter(
        (action) =>
          (action.type === 'create' || action.type === 'update') && isCustomResourceDefinition(action.ref),
      )
      .map((action) => action.ref);
    if (crds.length > 0) steps.push({ type: 'wait-for-crds', crds });
  }
  return steps;
}

function refuse(input: PlanInput, oldCount: number): PlanRefusal[] {
  const refusals: PlanRefusal[] = [];
  const { policy, desired } = input;
  if (policy.prune && !policy.allowEmpty && desired.length === 0 && oldCount > 0) {
    refusals.push({
      code: 'empty-set',
      message: `the set is empty and would prune all ${oldCount} objects it recorded; pass --allow-empty to allow it`,
    });
  }
  const parent = policy.parent;
  if (parent !== undefined && desired.some((object) => objectRefKey(object.ref) === objectRefKey(parent))) {
    refusals.push({
      code: 'parent-in-set',
      message: `${describeObjectRef(parent)} is the apply-config object of this set and cannot also be a member of it`,
    });
  }
  return refusals;
}

function applyAction(object: ManifestObject, live: LiveState, policy: PlanPolicy): ApplyAction {
  const { ref } = object;
  const verdict = mayApply(live, policy);
  switch (verdict.verdict) {
    case 'create':
      return verdict.unread === true
        ? { type: 'create', ref, object, unread: true }
        : { type: 'create', ref, object };
    case 'update':
      // mayApply returns update only for a present object.
      return {
        type: 'update',
        ref,
        object,
        live: (live as { object: JsonObject }).object,
        adopt: verdict.adopt,
      };
    case 'conflict':
      return verdict.reason === 'owned-by-other'
        ? { type: 'conflict', ref, object, reason: verdict.reason, owner: verdict.owner }
        : { type: 'conflict', ref, object, reason: verdict.reason };
    case 'unknown':
      return { type: 'unknown-read', ref, object, error: verdict.error };
  }
}

function pruneAction(ref: ObjectRef, live: LiveState, ownerUid: string | undefined): PruneAction {
  const verdict = mayPrune({ inOld: true, inNew: false, live, ownerUid });
  if (verdict.verdict === 'delete') {
    return { type: 'delete', ref, live: (live as { object: JsonObject }).object };
  }
  // Candidates are in the old list and not in the new one by construction.
  const reason = verdict.reason as PruneKeepReason;
  return {
    type: 'skip',
    ref,
    reason,
    ...(verdict.owner === undefined ? {} : { owner: verdict.owner }),
    ...(verdict.error === undefined ? {} : { error: verdict.error }),
  };
}

/**
 * Which skipped prunes stay in the inventory. What we may still own, or must still guard, stays and is
 * judged again next run: a failed read, a Namespace or CRD still needed, an object we keep on request
 * (it also guards its Namespace from a later prune). What is not ours any more, or gone, leaves.
 */
function keepsInventoryEntry(reason: PruneKeepReason): boolean {
  switch (reason) {
    case 'unknown-read':
    case 'namespace-still-used':
    case 'crd-still-used':
    case 'prune-disabled':
    case 'dry-run':
      return true;
    case 'already-absent':
    case 'not-owned':
    case 'owned-by-other':
      return false;
  }
}

const USED_BY_SHOWN = 3;

/**
 * Deleting a Namespace deletes everything in it, and deleting a CRD deletes all its custom resources.
 * So a Namespace or CRD that left the set is kept while anything that is not itself being deleted
 * still needs it: objects that stay in the set, recorded objects kept by a rule above, and (for
 * Namespaces) other objects the caller knows live there.
 */
function judgeSetRules(
  actions: readonly PruneAction[],
  desired: readonly ManifestObject[],
  inventoryOld: readonly ObjectRef[],
  liveNamespaceMembers: ReadonlyMap<string, readonly ObjectRef[]> | undefined,
): PruneAction[] {
  const deleting = new Set(actions.filter((a) => a.type === 'delete').map((a) => objectRefKey(a.ref)));
  const absent = new Set(
    actions.filter((a) => a.type === 'skip' && a.reason === 'already-absent').map((a) => objectRefKey(a.ref)),
  );
  const staying = new Map<string, ObjectRef>();
  const addStaying = (ref: ObjectRef) => {
    const key = objectRefKey(ref);
    if (!deleting.has(key) && !absent.has(key)) staying.set(key, ref);
  };
  desired.forEach((object) => addStaying(object.ref));
  inventoryOld.forEach(addStaying);
  const stayingRefs = [...staying.values()];
  const namespaceUsers = [
    ...stayingRefs,
    ...[...(liveNamespaceMembers?.values() ?? [])].flat().filter((ref) => !deleting.has(objectRefKey(ref))),
  ];

  return actions.map((action): PruneAction => {
    if (action.type !== 'delete') return action;
    let usedBy: ObjectRef[] = [];
    let reason: PruneKeepReason | undefined;
    if (isNamespace(action.ref)) {
      const name = action.ref.name;
      usedBy = namespaceUsers.filter((ref) => ref.namespace === name);
      reason = 'namespace-still-used';
    } else if (isCustomResourceDefinition(action.ref)) {
      const served = crdServes(action.ref, action.live);
      usedBy = stayingRefs.filter(
        (ref) => ref.group === served.group && (served.kind === undefined || ref.kind === served.kind),
      );
      reason = 'crd-still-used';
    }
    if (reason === undefined || usedBy.length === 0) return action;
    return { type: 'skip', ref: action.ref, reason, usedBy: dedupe(usedBy).slice(0, USED_BY_SHOWN) };
  });
}

/**
 * The group and kind a CRD serves, from its live spec; failing that, the group from its name
 * (`<plural>.<group>`) and any kind of that group, which keeps more rather than less.
 */
function crdServes(ref: ObjectRef, live: JsonObject): { group: string; kind: string | undefined } {
  const spec = live['spec'];
  const names = isJsonObject(spec) ? spec['names'] : undefined;
  const group = isJsonObject(spec) ? spec['group'] : undefined;
  const kind = isJsonObject(names) ? names['kind'] : undefined;
  if (typeof group === 'string' && typeof kind === 'string') return { group, kind };
  const dot = ref.name.indexOf('.');
  return { group: dot === -1 ? ref.name : ref.name.slice(dot + 1), kind: undefined };
}

function dedupe(refs: readonly ObjectRef[]): ObjectRef[] {
  return [...toInventory(refs)];
}

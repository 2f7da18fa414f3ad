import { computeApplySetId, type ApplySetIdentity } from '../inventory/applyset-id.js';
import type { Inventory } from '../inventory/inventory.js';
import { liveAnnotation, liveLabel } from '../inventory/live-state.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { COMPRESSED_INVENTORY_KEY, decodeInventory } from '../inventory/inventory-encoding.js';
import { parseInventory, parseInventoryLeniently } from '../inventory/parse-inventory.js';
import type { JsonObject } from '../manifests/json-value.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import {
  describeObjectRef,
  objectRefKey,
  type GroupVersionKind,
  type ObjectRef,
} from '../manifests/object-ref.js';
import { isNamespace } from '../manifests/apply-waves.js';
import { decodeManifestFiles } from '../manifests/decode-manifest-files.js';
import { manifestLimits } from '../manifests/manifest-limits.js';
import { parseManifestEntries } from '../manifests/parse-manifest-set.js';
import { buildPlan } from '../plan/build-plan.js';
import type { Plan } from '../plan/plan.js';
import type { ResourceLocation } from '../kube/kube-object-api.js';
import type { RestMapper } from '../kube/rest-mapper.js';
import type { ApplySetInput, ApplySetRequest, PruneRequest } from './apply-set-contract.js';
import { ApplySetInputRejectedError, ApplySetParentNotFoundError } from './apply-set-input-error.js';
import { gvkOf } from './object-location.js';
import {
  readLiveObjects,
  type LiveObjects,
  type LiveReadFilter,
  type ReadTarget,
} from './read-live-objects.js';
import type { RunContext } from './run-context.js';
import { serverSideReason } from './server-side-apply.js';

/*
 * Everything a run learns before it writes: the files decoded and validated against discovery, the
 * parent and its inventory, the live state of every object concerned, and the plan built from them.
 */

/** The apply-config object as the run read it, with the inventory it holds. */
export interface ParentState {
  readonly location: ResourceLocation;
  readonly ref: ObjectRef;
  readonly kep: ApplySetIdentity;
  /** Undefined when it does not exist yet (the command's ConfigMap, created at the first write). */
  readonly live: JsonObject | undefined;
  readonly inventory: Inventory;
}

/** Parse and validate every file before anything else; all problems at once. */
export async function loadManifests(
  input: ApplySetInput,
  mapper: RestMapper,
  signal: AbortSignal | undefined,
  generateNameHooks = false,
): Promise<ManifestObject[]> {
  // A first pass only learns which kinds the files name, so discovery is asked about their
  // group-versions and nothing else (again for a kind it lacked: its CRD may have been installed
  // since); the second pass validates against the real scopes.
  // The files' YAML is decoded once, for both passes.
  const entries = decodeManifestFiles(input.files, manifestLimits());
  const named: GroupVersionKind[] = [];
  parseManifestEntries(entries, {
    defaultNamespace: input.defaultNamespace,
    scopes: {
      scopeOf: (gvk) => {
        named.push(gvk);
        return 'Namespaced';
      },
    },
  });
  await mapper.load(named, signal);
  const parsed = parseManifestEntries(entries, {
    defaultNamespace: input.defaultNamespace,
    ...(input.enforceNamespace === undefined ? {} : { enforceNamespace: input.enforceNamespace }),
    scopes: mapper.scopeResolver(),
    generateNameHooks,
  });
  if (!parsed.ok) {
    const error = new ManifestSetError(parsed.errors);
    throw new ApplySetInputRejectedError(
      parsed.errors.map((problem) => problem.message),
      { cause: error },
    );
  }
  return [...parsed.objects];
}

/**
 * Reads the parent (unless the request brings it, `parent.live`) and parses its inventory: strictly for an apply (a damaged line stops the run),
 * leniently for a release (every readable line is let go).
 */
export async function readParent(
  request: Pick<ApplySetRequest, 'input' | 'release' | 'signal'>,
  context: Pick<RunContext, 'parentApi'>,
): Promise<ParentState> {
  const { signal } = request;
  const { parent } = request.input;
  const location: ResourceLocation = {
    group: parent.group,
    version: parent.version,
    resource: parent.resource,
    namespace: parent.namespace,
  };
  const ref: ObjectRef = {
    group: parent.group,
    kind: parent.kind,
    namespace: parent.namespace,
    name: parent.name,
  };
  // The caller's own fresh read when it gave one (the controller's reconcile), else a GET now.
  const live = parent.live ?? (await context.parentApi.get(location, parent.name, signal));
  if (live === undefined && !parent.createIfMissing) {
    throw new ApplySetParentNotFoundError(describeObjectRef(ref));
  }
  // An object we would create as the parent but that exists without the apply-cfg label belongs to
  // someone else (a user's own ConfigMap of that name): refuse rather than write an inventory into it,
  // as kubectl refuses an ApplySet parent that lacks its ApplySet labels.
  if (live !== undefined && parent.createIfMissing && liveLabel(live, MetadataKeys.applyConfig) !== 'true') {
    throw new ApplySetInputRejectedError(
      [
        `${describeObjectRef(ref)} exists but is not an apply-config object (no label ${MetadataKeys.applyConfig}: "true"); choose another --applyset name`,
      ],
      { subject: describeObjectRef(ref) },
    );
  }
  const inventoryText =
    live === undefined
      ? ''
      : decodeInventory({
          [MetadataKeys.lastAppliedObjects]: liveAnnotation(live, MetadataKeys.lastAppliedObjects),
          [COMPRESSED_INVENTORY_KEY]: liveAnnotation(live, COMPRESSED_INVENTORY_KEY),
        });
  const inventory =
    request.release === true
      ? parseInventoryLeniently(inventoryText).inventory
      : parseInventory(inventoryText);
  return { location, ref, kep: { ...ref }, live, inventory };
}

/**
 * The live state of every object of the files and of the inventory, read once. LISTs select the
 * set's part-of label; in a namespace whose Namespace may be pruned they stay unfiltered, since the
 * plan keeps a Namespace that others' objects still use (docs/inventory-protocol.md#6-prune-safety).
 */
export async function readLive(
  desired: readonly ManifestObject[],
  parent: ParentState,
  context: Pick<RunContext, 'api' | 'mapper' | 'concurrency'>,
  options: { readonly signal: AbortSignal | undefined; readonly createUnread: boolean },
): Promise<LiveObjects> {
  const { signal } = options;
  const unfilteredNamespaces = namespacesThatMayBePruned(desired, parent.inventory);
  const recorded = new Set(parent.inventory.map(objectRefKey));
  const unread = options.createUnread
    ? (object: ManifestObject) => mayCreateUnread(object, recorded, unfilteredNamespaces)
    : () => false;
  const targets = await readTargets(desired, parent.inventory, context.mapper, { signal, unread });
  const filter: LiveReadFilter = {
    labelSelector: `${MetadataKeys.applySetPartOf}=${computeApplySetId(parent.kep)}`,
    unfilteredNamespaces,
  };
  return readLiveObjects(context.api, targets, {
    concurrency: context.concurrency,
    filter,
    ...(signal === undefined ? {} : { signal }),
  });
}

/**
 * Issue #39: an object new to the set (not in its inventory) is most likely absent, and reading it
 * before its create is a request spent to learn so. It is created by a POST instead, which the server
 * refuses when the object exists; the run then reads it and judges it as kubectl judges a live object
 * (write-object.ts), so the outcome is kubectl apply's either way. Still read: an object applied
 * server-side (no POST to be refused), and one in a namespace whose Namespace the plan may prune
 * (there every LIST stays whole). A dry run reads everything (the caller passes createUnread false).
 */
function mayCreateUnread(
  object: ManifestObject,
  recorded: ReadonlySet<string>,
  unfilteredNamespaces: ReadonlySet<string>,
): boolean {
  return (
    !recorded.has(objectRefKey(object.ref)) &&
    !unfilteredNamespaces.has(object.ref.namespace) &&
    serverSideReason(object) === undefined
  );
}

function namespacesThatMayBePruned(desired: readonly ManifestObject[], inventory: Inventory): Set<string> {
  const desiredKeys = new Set(desired.map((object) => objectRefKey(object.ref)));
  return new Set(
    inventory.filter((ref) => isNamespace(ref) && !desiredKeys.has(objectRefKey(ref))).map((ref) => ref.name),
  );
}

async function readTargets(
  desired: readonly ManifestObject[],
  inventory: Inventory,
  mapper: RestMapper,
  options: { readonly signal: AbortSignal | undefined; readonly unread: (object: ManifestObject) => boolean },
): Promise<ReadTarget[]> {
  const { signal } = options;
  const targets: ReadTarget[] = [];
  const desiredKeys = new Set<string>();
  for (const object of desired) {
    desiredKeys.add(objectRefKey(object.ref));
    const mapping = mapper.cached(gvkOf(object));
    // Parsing succeeded, so a kind the cluster does not serve is served by a CRD of this set.
    if (mapping === undefined) targets.push({ ref: object.ref, mapping: 'not-served' });
    else if (options.unread(object)) targets.push({ ref: object.ref, mapping: 'create-unread' });
    else targets.push({ ref: object.ref, mapping });
  }
  await Promise.all(
    inventory
      .filter((ref) => !desiredKeys.has(objectRefKey(ref)))
      .map(async (ref) => {
        try {
          targets.push({ ref, mapping: await mapper.resolveGroupKind(ref.group, ref.kind, signal) });
        } catch (error) {
          targets.push({ ref, mapping: 'unmapped', error });
        }
      }),
  );
  return targets;
}

/** The pure plan of the run; a refused plan (an empty set, the parent in the set) throws, stalled. */
export function planRun(
  desired: readonly ManifestObject[],
  parent: ParentState,
  live: LiveObjects,
  request: Pick<ApplySetRequest, 'write' | 'prune' | 'syncWaves'>,
  ownerUid: string | undefined,
): Plan {
  const planned = buildPlan({
    desired,
    inventoryOld: parent.inventory,
    live: live.live,
    liveNamespaceMembers: live.namespaceMembers,
    policy: {
      ownerUid,
      adopt: request.write.adopt,
      ...pruneProperties(request.prune),
      parent: parent.ref,
      syncWaves: request.syncWaves !== undefined,
    },
  });
  if (!planned.ok) {
    throw new ApplySetInputRejectedError(
      planned.refusals.map((refusal) => refusal.message),
      { subject: describeObjectRef(parent.ref) },
    );
  }
  return planned.plan;
}

/** The plan's prune policy: candidates only when pruning, judged but kept when it is a dry run. */
function pruneProperties(prune: PruneRequest): { prune: boolean; pruneDryRun?: true; allowEmpty: boolean } {
  if (prune.mode === 'off') return { prune: false, allowEmpty: false };
  return {
    prune: true,
    ...(prune.mode === 'dry-run' ? { pruneDryRun: true } : {}),
    allowEmpty: prune.allowEmpty,
  };
}

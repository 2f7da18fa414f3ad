import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import { computeApplyHash } from '../inventory/apply-hash.js';
import type { ApplySetParent as KepParent } from '../inventory/applyset-id.js';
import {
  applySetMemberMetadata,
  applySetParentMetadata,
  DEFAULT_TOOLING,
  type ParentMetadata,
} from '../inventory/applyset-metadata.js';
import type { Inventory } from '../inventory/inventory.js';
import { liveAnnotation, liveLabel } from '../inventory/live-state.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { mayApply } from '../inventory/ownership-policy.js';
import { parseInventory, parseInventoryLeniently } from '../inventory/parse-inventory.js';
import type { LiveState } from '../inventory/live-state.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { ManifestSetError } from '../manifests/manifest-error.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import {
  describeObjectRef,
  objectRefKey,
  type GroupVersionKind,
  type ObjectRef,
} from '../manifests/object-ref.js';
import { parseManifestSet } from '../manifests/parse-manifest-set.js';
import { applyStrategicMergePatch } from '../merge/apply-strategic-merge-patch.js';
import { computeApplyPatch } from '../merge/compute-apply-patch.js';
import { encodeGoJson } from '../merge/encode-go-json.js';
import { applyJsonMergePatch } from '../merge/json-merge-patch.js';
import {
  buildCreateBody,
  buildLastAppliedConfiguration,
  LAST_APPLIED_ANNOTATION,
} from '../merge/last-applied-configuration.js';
import type { PatchMeta } from '../merge/patch-meta.js';
import { buildPlan } from '../plan/build-plan.js';
import { diffFields, formatFieldChange } from '../plan/diff-fields.js';
import { narrowedInventory } from '../plan/narrowed-inventory.js';
import type { ApplyAction, PlanStep, PruneAction } from '../plan/plan.js';
import { KubeApiError, UnknownKindError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import {
  createKubeObjectApi,
  type KubeObjectApi,
  type ResourceLocation,
  type WriteOptions,
} from '../kube/kube-object-api.js';
import { createOpenApiPatchMetaSource, type PatchMetaSource } from '../kube/openapi-patch-meta-source.js';
import { createRestMapper, type RestMapper, type RestMapping } from '../kube/rest-mapper.js';
import type { ApplySetEngine, ApplySetRequest, ApplySetResult, ObjectOutcome } from './apply-set-contract.js';
import { ApplySetInputRejectedError, ApplySetParentNotFoundError } from './apply-set-input-error.js';
import { CrdNotEstablishedError } from './crd-not-established-error.js';
import { ParentChangedError } from './parent-changed-error.js';
import { releaseObject } from './release-object.js';
import { createSetParentFinder } from './find-set-parent.js';
import { guardHolderPrune, plannedDeletions } from './guard-holder-prune.js';
import { readLiveObjects, type ReadTarget } from './read-live-objects.js';
import { isSecretManifest, redactSecretValues } from '../manifests/redact-secret-values.js';

/** The subset of a pino logger the engine uses. */
export interface EngineLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ApplySetEngineOptions {
  readonly kubeClient: KubeClient;
  readonly logger?: EngineLogger;
  /** Objects of one wave applied at once (and reads in flight); default 16. */
  readonly concurrency?: number;
  /** The KEP-3659 `tooling` value written on the parent. */
  readonly tooling?: string;
  /** How long to wait for the set's CRDs to be Established; default 60 s. */
  readonly crdEstablishedTimeoutMs?: number;
  /**
   * How old discovery's answer lacking a kind must be before an unknown kind asks the server again
   * (at most once per run); default 10 s.
   */
  readonly discoveryRecheckMs?: number;
  /** How long `--force` waits for a deleted object to be gone before recreating it; default 60 s. */
  readonly forceDeleteTimeoutMs?: number;
  /**
   * Called after each step of the plan has run. Tests throw from it to simulate a crash between two
   * steps of the proposal's sequence; the error propagates out of the engine.
   */
  readonly afterStep?: (step: PlanStep, index: number) => void | Promise<void>;
  /**
   * Where patch strategies and merge keys come from; default: the server's OpenAPI (v3, else v2),
   * read once per group-version, falling back to the compiled-in table, as kubectl does.
   */
  readonly patchMetaSource?: PatchMetaSource;
}

/** kubectl's maxPatchRetry: a 409 on PATCH is answered by a re-read and a new patch, five times. */
const MAX_CONFLICT_RETRIES = 5;
const POLL_MS = 200;

/**
 * The imperative shell around the pure core: load and validate the files, read the parent and the
 * live objects, `buildPlan`, then run the plan's steps in order (widen inventory, apply waves, wait
 * for CRDs, prune waves, narrow inventory, write the hash) and return what happened as data.
 */
export function createApplySetEngine(options: ApplySetEngineOptions): ApplySetEngine {
  const api = createKubeObjectApi(options.kubeClient);
  const concurrency = options.concurrency ?? 16;
  const tooling = options.tooling ?? DEFAULT_TOOLING;
  // One mapper per engine: the controller reuses discovery across reconciles; each run gets a view
  // in which an unknown kind asks its group-version again at most once (a CRD installed since).
  const mapper = createRestMapper(
    options.kubeClient,
    options.discoveryRecheckMs === undefined ? {} : { recheckAfterMs: options.discoveryRecheckMs },
  );
  const patchMeta =
    options.patchMetaSource ??
    createOpenApiPatchMetaSource({
      client: options.kubeClient,
      onFetchError: (path, error) =>
        options.logger?.warn({ path, err: error }, 'OpenAPI not readable; using the built-in patch metadata'),
    });
  const serverNoOps = new Map<string, string>();
  return (request) =>
    runApplySet(request, {
      ...options,
      api,
      mapper: mapper.forRun(),
      concurrency,
      tooling,
      patchMeta,
      serverNoOps,
    });
}

interface RunContext extends ApplySetEngineOptions {
  readonly api: KubeObjectApi;
  /**
   * Per object of every run of this engine: the (resourceVersion, patch) the server last answered
   * without a change. The same patch on the same version is not sent again.
   */
  readonly serverNoOps: Map<string, string>;
  readonly mapper: RestMapper;
  readonly patchMeta: PatchMetaSource;
  readonly concurrency: number;
  readonly tooling: string;
}

async function runApplySet(request: ApplySetRequest, context: RunContext): Promise<ApplySetResult> {
  const { api, mapper, signal } = { ...context, signal: request.signal };
  const desired = request.release === true ? [] : await loadManifests(request, mapper);

  const parent = request.parent;
  const parentLocation: ResourceLocation = {
    group: parent.group,
    version: parent.version,
    resource: parent.resource,
    namespace: parent.namespace,
  };
  const parentRef: ObjectRef = {
    group: parent.group,
    kind: parent.kind,
    namespace: parent.namespace,
    name: parent.name,
  };
  const kepParent: KepParent = {
    group: parent.group,
    kind: parent.kind,
    namespace: parent.namespace,
    name: parent.name,
  };
  let parentLive = await api.get(parentLocation, parent.name, signal);
  if (parentLive === undefined && !parent.createIfMissing) {
    throw new ApplySetParentNotFoundError(describeObjectRef(parentRef));
  }
  // An object we would create as the parent but that exists without the apply-cfg label belongs to
  // someone else (a user's own ConfigMap of that name): refuse rather than write an inventory into it,
  // as kubectl refuses an ApplySet parent that lacks its ApplySet labels.
  if (
    parentLive !== undefined &&
    parent.createIfMissing &&
    liveLabel(parentLive, MetadataKeys.applyConfig) !== 'true'
  ) {
    throw new ApplySetInputRejectedError([
      `${describeObjectRef(parentRef)} exists but is not an apply-config object (no label ${MetadataKeys.applyConfig}: "true"); choose another --applyset name`,
    ]);
  }
  const inventoryText =
    parentLive === undefined ? '' : (liveAnnotation(parentLive, MetadataKeys.lastAppliedObjects) ?? '');
  const inventoryOld =
    request.release === true
      ? parseInventoryLeniently(inventoryText).inventory
      : parseInventory(inventoryText);
  let ownerUid = parentLive === undefined ? undefined : uidOf(parentLive);

  const targets = await readTargets(desired, inventoryOld, mapper, signal);
  const { live, namespaceMembers } = await readLiveObjects(api, targets, {
    concurrency: context.concurrency,
    ...(signal === undefined ? {} : { signal }),
  });
  if (request.release === true) {
    const outcomes = await releaseOwned(inventoryOld, live, {
      ...context,
      request,
      ownerUid: ownerUid ?? '',
    });
    return { outcomes, parentUid: ownerUid ?? '', completed: true };
  }

  const planned = buildPlan({
    desired,
    inventoryOld,
    live,
    liveNamespaceMembers: namespaceMembers,
    policy: {
      ownerUid,
      adopt: request.adopt,
      prune: request.prune,
      allowEmpty: request.allowEmpty,
      parent: parentRef,
    },
  });
  if (!planned.ok) throw new ApplySetInputRejectedError(planned.refusals.map((refusal) => refusal.message));

  const outcomes: ObjectOutcome[] = [];
  const confirmedDeleted: ObjectRef[] = [];
  // Objects this run added to the inventory but that were certainly never written (see neverWritten).
  const unwritten: ObjectRef[] = [];
  const inventoryOldKeys = new Set(inventoryOld.map(objectRefKey));
  // Namespaces and CRDs kept because they hold objects of others: they leave the inventory too.
  const released: ObjectRef[] = [];
  const pruning = plannedDeletions(planned.plan.steps);
  let applyFailed = false;
  let finalInventory: Inventory | undefined;
  const queue = new PQueue({ concurrency: context.concurrency });

  const writeParent = async (metadata: ParentMetadata) => {
    if (parentLive === undefined) {
      parentLive = await api.create(
        parentLocation,
        {
          apiVersion: parent.group === '' ? parent.version : `${parent.group}/${parent.version}`,
          kind: parent.kind,
          metadata: {
            name: parent.name,
            ...(parent.namespace === '' ? {} : { namespace: parent.namespace }),
            labels: { ...metadata.labels },
            annotations: { ...metadata.annotations },
          },
        },
        signal,
      );
      ownerUid = uidOf(parentLive);
      return;
    }
    const patch = metadataPatch(parentLive, metadata);
    if (patch === undefined) return;
    // A compare-and-swap on the version this run read and planned on: a replica that lost the
    // leadership while paused, or any other writer in between, turns this into a 409, never into a
    // stale inventory merged over a newer one.
    const resourceVersion = resourceVersionOf(parentLive);
    const guardedPatch =
      resourceVersion === undefined
        ? patch
        : { ...patch, metadata: { ...(patch['metadata'] as JsonObject), resourceVersion } };
    try {
      parentLive = await api.patch(
        parentLocation,
        parent.name,
        'application/merge-patch+json',
        JSON.stringify(guardedPatch),
        signal,
      );
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 409) {
        throw new ParentChangedError(describeObjectRef(parentRef), { cause: error });
      }
      throw error;
    }
  };

  // The hash is left off: only the last step writes it, once every step before it has run. A parent
  // that does not exist yet is not created for an empty inventory: a run in which every object was
  // refused (conflicts) leaves nothing behind, not an empty apply-config object.
  const writeInventory = async (inventory: Inventory) => {
    if (parentLive === undefined && inventory.length === 0) return;
    await writeParent(
      applySetParentMetadata({ parent: kepParent, inventory, tooling: context.tooling, withHash: false }),
    );
  };

  // Sets whose parents are ConfigMaps (the command's) or of this run's own parent kind.
  const findSetParent = createSetParentFinder(
    context.kubeClient,
    [
      { location: { group: '', version: 'v1', resource: 'configmaps', namespace: '' }, type: 'configmap' },
      ...(parent.group === '' && parent.resource === 'configmaps'
        ? []
        : [
            {
              location: {
                group: parent.group,
                version: parent.version,
                resource: parent.resource,
                namespace: '',
              },
              type:
                parent.group === ''
                  ? parent.kind.toLowerCase()
                  : `${parent.kind.toLowerCase()}.${parent.group}`,
            },
          ]),
    ],
    signal,
  );
  const objectContext = (): ObjectContext => ({
    findSetParent,
    ...context,
    request,
    ownerUid: ownerUid ?? '',
    member: applySetMemberMetadata({ ownerUid: ownerUid ?? '', parent: kepParent }),
  });

  const steps = planned.plan.steps;
  const progress = { applied: 0, toApply: 0, pruned: 0, toPrune: 0 };
  for (const step of steps) {
    if (step.type === 'apply-wave') progress.toApply += step.actions.length;
    if (step.type === 'prune-wave') progress.toPrune += step.actions.length;
  }
  const report =
    (field: 'applied' | 'pruned') =>
    <T>(outcome: T): T => {
      progress[field] += 1;
      request.onProgress?.({ ...progress });
      return outcome;
    };
  for (const [index, step] of steps.entries()) {
    signal?.throwIfAborted();
    context.logger?.debug({ step: step.type, index }, 'applyset step');
    switch (step.type) {
      case 'widen-inventory':
        if (!request.dryRun) await writeInventory(step.inventory);
        break;
      case 'apply-wave': {
        const objects = objectContext();
        const results = await queue.addAll(
          step.actions.map((action) => () => applyAction(action, objects).then(report('applied'))),
          signal === undefined ? {} : { signal },
        );
        for (const [position, outcome] of results.entries()) {
          if (outcome === undefined) continue;
          if (outcome.action === 'failed') {
            applyFailed = true;
            const action = step.actions[position];
            if (action !== undefined && neverWritten(action, outcome, inventoryOldKeys))
              unwritten.push(outcome.ref);
          }
          outcomes.push(outcome);
        }
        break;
      }
      case 'wait-for-crds':
        if (!request.dryRun) {
          const ready = step.crds.filter((ref) =>
            outcomes.some(
              (o) =>
                objectRefKey(o.ref) === objectRefKey(ref) && o.action !== 'failed' && o.action !== 'conflict',
            ),
          );
          await waitForCrds(ready, context, signal);
        }
        break;
      case 'prune-wave': {
        const results = await queue.addAll(
          step.actions.map(
            (action) => () =>
              pruneAction(action, {
                ...context,
                request,
                applyFailed,
                ownerUid: ownerUid ?? '',
                pruning,
              }).then(report('pruned')),
          ),
          signal === undefined ? {} : { signal },
        );
        for (const result of results) {
          if (result === undefined) continue;
          if (result.action === 'pruned') confirmedDeleted.push(result.ref);
          if (result.action === 'prune-skipped' && result.released === true) released.push(result.ref);
          outcomes.push(result);
        }
        break;
      }
      case 'narrow-inventory':
        finalInventory = narrowedInventory(step, confirmedDeleted, released, unwritten);
        if (!request.dryRun) await writeInventory(finalInventory);
        break;
      case 'write-hash':
        if (!request.dryRun && finalInventory !== undefined && parentLive !== undefined) {
          await writeParent({
            labels: { [MetadataKeys.applyHash]: computeApplyHash(finalInventory) },
            annotations: {},
          });
        }
        break;
    }
    await context.afterStep?.(step, index);
  }
  return {
    outcomes,
    parentUid: ownerUid ?? '',
    ...(parentLive === undefined ? {} : { parentResourceVersion: resourceVersionOf(parentLive) ?? '' }),
    completed: !request.dryRun,
  };
}

/**
 * deletionPolicy Orphan: take this set's marks off every object it owns, one at a time through the
 * queue; an object owned by another set, or not found, is left as it is. A failure is reported per
 * object, so the caller can retry before letting the parent go.
 */
async function releaseOwned(
  inventory: Inventory,
  live: ReadonlyMap<string, LiveState>,
  context: RunContext & { readonly request: ApplySetRequest; readonly ownerUid: string },
): Promise<ObjectOutcome[]> {
  const queue = new PQueue({ concurrency: context.concurrency });
  const { signal } = context.request;
  const results = await queue.addAll(
    inventory.map((ref) => async (): Promise<ObjectOutcome | undefined> => {
      const state = live.get(objectRefKey(ref));
      if (state === undefined || state.status === 'absent') return undefined;
      // A kind no longer served has no objects left to release.
      if (state.status === 'unknown' && state.error instanceof UnknownKindError) return undefined;
      if (state.status === 'unknown') {
        return {
          action: 'failed',
          ref,
          message: `could not be read to release it: ${messageOf(state.error)}`,
        };
      }
      if (liveAnnotation(state.object, MetadataKeys.applyOwner) !== context.ownerUid) return undefined;
      try {
        const mapping = await context.mapper.resolveGroupKind(ref.group, ref.kind, signal);
        await releaseObject(context.api, locationIn(mapping, ref.namespace), ref.name, state.object, signal);
        return {
          action: 'prune-skipped',
          ref,
          reason: 'released: the set was let go (orphaned)',
          released: true,
        };
      } catch (error) {
        if (error instanceof KubeApiError && error.notFound) return undefined;
        if (error instanceof Error && error.name === 'AbortError') throw error;
        return { action: 'failed', ref, message: `releasing it failed: ${messageOf(error)}`, cause: error };
      }
    }),
    signal === undefined ? {} : { signal },
  );
  return results.filter((outcome): outcome is ObjectOutcome => outcome !== undefined);
}

/** Parse and validate every file before anything else; all problems at once. */
async function loadManifests(request: ApplySetRequest, mapper: RestMapper): Promise<ManifestObject[]> {
  // A first pass only learns which kinds the files name, so discovery is asked about their
  // group-versions and nothing else (again for a kind it lacked: its CRD may have been installed
  // since); the second pass validates against the real scopes.
  const named: GroupVersionKind[] = [];
  parseManifestSet(request.files, {
    defaultNamespace: request.defaultNamespace,
    scopes: {
      scopeOf: (gvk) => {
        named.push(gvk);
        return 'Namespaced';
      },
    },
  });
  await mapper.load(named, request.signal);
  const parsed = parseManifestSet(request.files, {
    defaultNamespace: request.defaultNamespace,
    ...(request.enforceNamespace === undefined ? {} : { enforceNamespace: request.enforceNamespace }),
    scopes: mapper.scopeResolver(),
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

async function readTargets(
  desired: readonly ManifestObject[],
  inventory: Inventory,
  mapper: RestMapper,
  signal: AbortSignal | undefined,
): Promise<ReadTarget[]> {
  const targets: ReadTarget[] = [];
  const desiredKeys = new Set<string>();
  for (const object of desired) {
    desiredKeys.add(objectRefKey(object.ref));
    const mapping = mapper.cached(gvkOf(object));
    // Parsing succeeded, so a kind the cluster does not serve is served by a CRD of this set.
    targets.push(
      mapping === undefined ? { ref: object.ref, mapping: 'not-served' } : { ref: object.ref, mapping },
    );
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

interface ObjectContext extends RunContext {
  readonly request: ApplySetRequest;
  readonly ownerUid: string;
  readonly member: ParentMetadata;
  /** The other set's apply-config object by uid, for conflict messages. */
  readonly findSetParent: (uid: string) => Promise<string | undefined>;
}

async function applyAction(action: ApplyAction, context: ObjectContext): Promise<ObjectOutcome> {
  const outcome = await applyActionOnce(action, context);
  if (outcome.action === 'failed' && isSecretManifest(action.object.manifest)) {
    // The server's message echoes what it refused; the cause (with the same text) is dropped.
    const message = redactSecretValues(outcome.message, action.object.manifest);
    return { action: 'failed', ref: outcome.ref, message, source: action.object.source };
  }
  return outcome.action === 'failed' || outcome.action === 'conflict'
    ? { ...outcome, source: action.object.source }
    : outcome;
}

async function applyActionOnce(action: ApplyAction, context: ObjectContext): Promise<ObjectOutcome> {
  const { ref } = action;
  switch (action.type) {
    case 'conflict':
      return { action: 'conflict', ref, message: await conflictMessage(action, context) };
    case 'unknown-read':
      return {
        action: 'failed',
        ref,
        message: `could not be read: ${messageOf(action.error)}`,
        cause: action.error,
      };
    case 'create':
      if (context.request.dryRun) return { action: 'would-create', ref };
      return guarded(ref, () => createObject(action.object, context, 0));
    case 'update': {
      const outcome = await guarded(ref, () => updateObject(action.object, action.live, context, 0));
      return action.adopt ? markAdopted(outcome) : outcome;
    }
  }
}

/** An update of a live object without an apply-owner took it over: the outcome says so. */
function markAdopted(outcome: ObjectOutcome): ObjectOutcome {
  return outcome.action === 'configured' || outcome.action === 'unchanged'
    ? { ...outcome, adopted: true }
    : outcome;
}

/**
 * Why an object of the set was left untouched: the plan's conflict and a re-read's verdict say it
 * alike, naming the other set by its apply-config object when it can be found, else by its uid.
 */
async function conflictMessage(
  conflict: { readonly reason: 'owned-by-other' | 'adoption-disabled'; readonly owner?: string },
  context: ObjectContext,
): Promise<string> {
  if (conflict.reason !== 'owned-by-other') {
    return 'exists without an apply-owner and adoption is disabled: left untouched';
  }
  const owner = conflict.owner;
  const parent = owner === undefined ? undefined : await context.findSetParent(owner);
  const who = parent ?? `apply-owner ${owner ?? '?'}`;
  return `owned by another set (${who}): left untouched`;
}

async function guarded(ref: ObjectRef, run: () => Promise<ObjectOutcome>): Promise<ObjectOutcome> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    return { action: 'failed', ref, message: messageOf(error), cause: error };
  }
}

async function locationOf(object: ManifestObject, context: ObjectContext): Promise<ResourceLocation> {
  const mapping = await context.mapper.resolve(gvkOf(object), context.request.signal);
  return locationIn(mapping, object.ref.namespace);
}

/** Where an object of this mapping lives: cluster-scoped kinds ignore the namespace. */
function locationIn(mapping: RestMapping, namespace: string): ResourceLocation {
  return {
    group: mapping.group,
    version: mapping.version,
    resource: mapping.resource,
    namespace: mapping.scope === 'Namespaced' ? namespace : '',
  };
}

/**
 * DELETE with background propagation, as kubectl does, and a uid precondition when the uid is known:
 * delete exactly the object whose ownership was checked, not one recreated since.
 */
async function deleteExactly(
  context: RunContext & { readonly request: ApplySetRequest },
  location: ResourceLocation,
  name: string,
  uid: string | undefined,
): Promise<void> {
  await context.api.delete(
    location,
    name,
    { propagationPolicy: 'Background', ...(uid === undefined ? {} : { uid }) },
    context.request.signal,
  );
}

async function createObject(
  object: ManifestObject,
  context: ObjectContext,
  attempt: number,
): Promise<ObjectOutcome> {
  const { signal } = context.request;
  const location = await locationOf(object, context);
  const { modified } = buildLastAppliedConfiguration(object.manifest);
  // The ownership metadata goes into the object but not into its last-applied annotation: that holds
  // what the file says, so `kubectl apply` of the same file agrees with us.
  const body = buildCreateBody(withMember(modified, context.member));
  const warnings: string[] = [];
  try {
    await context.api.create(location, body, signal, writeOptions(context.request, warnings));
    return { action: 'created', ref: object.ref, ...warned(warnings) };
  } catch (error) {
    if (!(error instanceof KubeApiError && error.status === 409) || attempt >= MAX_CONFLICT_RETRIES)
      throw error;
    // Created meanwhile by someone else: judge it as kubectl would judge a live object.
    return reconcileWithLive(object, context, attempt + 1);
  }
}

async function reconcileWithLive(
  object: ManifestObject,
  context: ObjectContext,
  attempt: number,
): Promise<ObjectOutcome> {
  const location = await locationOf(object, context);
  const live = await context.api.get(location, object.ref.name, context.request.signal);
  if (live === undefined) return createObject(object, context, attempt);
  const verdict = mayApply(
    { status: 'present', object: live },
    { ownerUid: context.ownerUid, adopt: context.request.adopt },
  );
  switch (verdict.verdict) {
    case 'update': {
      const outcome = await updateObject(object, live, context, attempt);
      return verdict.adopt ? markAdopted(outcome) : outcome;
    }
    case 'conflict':
      return {
        action: 'conflict',
        ref: object.ref,
        message: await conflictMessage(verdict, context),
      };
    case 'create':
    case 'unknown':
      return createObject(object, context, attempt);
  }
}

async function updateObject(
  object: ManifestObject,
  live: JsonObject,
  context: ObjectContext,
  attempt: number,
): Promise<ObjectOutcome> {
  const { signal } = context.request;
  const meta: PatchMeta | 'json-merge' = await context.patchMeta.metaFor(gvkOf(object), signal);
  const computed = computeApplyPatch({ manifest: object.manifest, current: live, meta });
  const patch = withMemberPatch(computed.kind === 'patch' ? computed.patch : undefined, live, context.member);
  if (patch === undefined) return { action: 'unchanged', ref: object.ref };
  const body = computed.kind === 'patch' && patch === computed.patch ? computed.body : encodeGoJson(patch);
  const contentType =
    meta === 'json-merge' ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json';

  if (context.request.dryRun) {
    const after =
      meta === 'json-merge'
        ? (applyJsonMergePatch(live, patch) as JsonObject)
        : applyStrategicMergePatch(live, patch, meta);
    const diff = diffFields(live, after)
      .filter((change) => !change.path.includes(LAST_APPLIED_ANNOTATION))
      .map(formatFieldChange);
    return diff.length === 0 && computed.kind === 'unchanged'
      ? { action: 'unchanged', ref: object.ref }
      : { action: 'would-configure', ref: object.ref, diff };
  }

  // Some patches change nothing on the server, every time (a Secret's stringData, a PDB selector,
  // `readOnly: false`): kubectl says `configured` for them on every apply. We say what the server did,
  // and do not send again the patch it ignored while the object is still at the version it ignored
  // it at.
  const noOpKey = `${objectRefKey(object.ref)}\n${uidOf(live) ?? ''}`;
  const noOp = `${resourceVersionOf(live) ?? ''}\n${contentType}\n${body}`;
  if (context.serverNoOps.get(noOpKey) === noOp) return { action: 'unchanged', ref: object.ref };
  const location = await locationOf(object, context);
  const warnings: string[] = [];
  try {
    const after = await context.api.patch(
      location,
      object.ref.name,
      contentType,
      body,
      signal,
      writeOptions(context.request, warnings),
    );
    if (resourceVersionOf(after) !== undefined && resourceVersionOf(after) === resourceVersionOf(live)) {
      rememberNoOp(context.serverNoOps, noOpKey, noOp);
      return { action: 'unchanged', ref: object.ref, ...warned(warnings) };
    }
    context.serverNoOps.delete(noOpKey);
    return { action: 'configured', ref: object.ref, ...warned(warnings) };
  } catch (error) {
    if (!(error instanceof KubeApiError)) throw error;
    if (error.status === 409 && attempt < MAX_CONFLICT_RETRIES) {
      return reconcileWithLive(object, context, attempt + 1);
    }
    if (error.immutableField) {
      if (!context.request.force) {
        return {
          action: 'failed',
          ref: object.ref,
          message: `${error.detail} (a field that cannot change was changed; apply with --force to delete and recreate the object)`,
          cause: error,
        };
      }
      await deleteAndWait(location, object.ref.name, uidOf(live), context);
      await createObject(object, context, attempt);
      return { action: 'configured', ref: object.ref };
    }
    throw error;
  }
}

/** kubectl apply --force: delete (background propagation), wait until the object is gone, recreate. */
async function deleteAndWait(
  location: ResourceLocation,
  name: string,
  uid: string | undefined,
  context: ObjectContext,
) {
  const { signal } = context.request;
  try {
    await deleteExactly(context, location, name, uid);
  } catch (error) {
    if (!(error instanceof KubeApiError && error.notFound)) throw error;
  }
  const deadline = Date.now() + (context.forceDeleteTimeoutMs ?? 60_000);
  while ((await context.api.get(location, name, signal)) !== undefined) {
    if (Date.now() > deadline)
      throw new Error(`${name} was deleted for --force but is still present (finalizers?)`);
    await delay(POLL_MS, undefined, signal === undefined ? {} : { signal });
  }
}

async function pruneAction(
  action: PruneAction,
  context: RunContext & {
    readonly request: ApplySetRequest;
    readonly applyFailed: boolean;
    readonly ownerUid: string;
    readonly pruning: ReturnType<typeof plannedDeletions>;
  },
): Promise<ObjectOutcome | undefined> {
  const { ref } = action;
  if (action.type === 'skip') {
    if (action.reason === 'already-absent') return undefined;
    return {
      action: 'prune-skipped',
      ref,
      reason: skipReason(action),
      ...(action.reason === 'unknown-read' ? { incomplete: true } : {}),
      ...(action.reason === 'owned-by-other' && action.owner !== undefined ? { ownedBy: action.owner } : {}),
    };
  }
  if (context.applyFailed && !context.request.dryRun) {
    // As Flux does: a failed apply stops the prune, so a renamed object is not deleted before its
    // replacement exists. The object stays in the inventory and is judged again next run.
    return { action: 'prune-skipped', ref, reason: 'postponed: an object of this run failed to apply' };
  }
  const { signal, dryRun } = context.request;
  const kept = await guardHolderPrune(action, { ...context, dryRun, signal });
  if (kept !== undefined) return kept;
  if (dryRun) return { action: 'would-prune', ref };
  try {
    const mapping = await context.mapper.resolveGroupKind(ref.group, ref.kind, signal);
    await deleteExactly(context, locationIn(mapping, ref.namespace), ref.name, uidOf(action.live));
    return { action: 'pruned', ref };
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return { action: 'pruned', ref };
    if (error instanceof KubeApiError && error.status === 409) {
      return {
        action: 'prune-skipped',
        ref,
        reason: 'the object was replaced since it was read; judged again next run',
        incomplete: true,
      };
    }
    if (error instanceof Error && error.name === 'AbortError') throw error;
    return { action: 'failed', ref, message: `prune failed: ${messageOf(error)}`, cause: error };
  }
}

function skipReason(action: Extract<PruneAction, { type: 'skip' }>): string {
  const users = (action.usedBy ?? []).map(describeObjectRef).join(', ');
  switch (action.reason) {
    case 'namespace-still-used':
      return `kept: objects that stay live in it (${users})`;
    case 'crd-still-used':
      return `kept: custom resources of it stay (${users})`;
    case 'owned-by-other':
      return `kept: owned by another set (apply-owner ${action.owner ?? '?'})`;
    case 'not-owned':
      return "kept: it does not carry this set's apply-owner annotation (it was never taken over, e.g. its own apply failed, or the annotation was removed)";
    case 'prune-disabled':
      return 'kept: annotated applyset.dev/prune: disabled';
    case 'unknown-read':
      return `kept: it could not be read (${messageOf(action.error)})`;
    case 'already-absent':
      return 'already gone';
  }
}

async function waitForCrds(crds: readonly ObjectRef[], context: RunContext, signal: AbortSignal | undefined) {
  const deadline = Date.now() + (context.crdEstablishedTimeoutMs ?? 60_000);
  const location: ResourceLocation = {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespace: '',
  };
  for (const ref of crds) {
    for (;;) {
      const crd = await context.api.get(location, ref.name, signal);
      if (crd !== undefined && isEstablished(crd)) {
        // Discovery follows Established closely but not atomically: refresh until the kinds show.
        if (await servedKindsVisible(crd, context.mapper, signal)) break;
      }
      if (Date.now() > deadline) {
        throw new CrdNotEstablishedError(ref.name);
      }
      await delay(POLL_MS, undefined, signal === undefined ? {} : { signal });
    }
  }
}

function isEstablished(crd: JsonObject): boolean {
  const status = crd['status'];
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Established' && c['status'] === 'True')
  );
}

async function servedKindsVisible(
  crd: JsonObject,
  mapper: RestMapper,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const spec = crd['spec'];
  if (!isJsonObject(spec)) return true;
  const group = spec['group'];
  const names = spec['names'];
  const kind = isJsonObject(names) ? names['kind'] : undefined;
  const versions = Array.isArray(spec['versions']) ? spec['versions'] : [];
  if (typeof group !== 'string' || typeof kind !== 'string') return true;
  for (const entry of versions) {
    if (!isJsonObject(entry) || entry['served'] !== true || typeof entry['name'] !== 'string') continue;
    const gvk = { group, version: entry['name'], kind };
    if (mapper.cached(gvk) !== undefined) continue;
    await mapper.refresh(group, entry['name'], signal);
    if (mapper.cached(gvk) === undefined) return false;
  }
  return true;
}

/** A merge patch of the parent's labels and annotations, or undefined when the live object has them all. */
function metadataPatch(live: JsonObject, metadata: ParentMetadata): JsonObject | undefined {
  const liveMeta = isJsonObject(live['metadata']) ? live['metadata'] : {};
  const differs = (have: JsonValue | undefined, want: Readonly<Record<string, string>>) => {
    const map = isJsonObject(have) ? have : {};
    return Object.entries(want).some(([key, value]) => map[key] !== value);
  };
  const labels = differs(liveMeta['labels'], metadata.labels);
  const annotations = differs(liveMeta['annotations'], metadata.annotations);
  if (!labels && !annotations) return undefined;
  return {
    metadata: {
      ...(labels ? { labels: { ...metadata.labels } } : {}),
      ...(annotations ? { annotations: { ...metadata.annotations } } : {}),
    },
  };
}

/** `modified` plus the member's apply-owner annotation and part-of label. */
function withMember(modified: JsonObject, member: ParentMetadata): JsonObject {
  const metadata = isJsonObject(modified['metadata']) ? modified['metadata'] : {};
  const labels = isJsonObject(metadata['labels']) ? metadata['labels'] : {};
  const annotations = isJsonObject(metadata['annotations']) ? metadata['annotations'] : {};
  return {
    ...modified,
    metadata: {
      ...metadata,
      labels: { ...labels, ...member.labels },
      annotations: { ...annotations, ...member.annotations },
    },
  };
}

/**
 * The patch to send: the three-way patch, with the ownership metadata added when the live object
 * lacks it. Undefined when there is nothing to send (kubectl's "unchanged"). A `labels: null` in the
 * patch (every label removed from the file) becomes per-key deletions, so our label survives it.
 */
function withMemberPatch(
  patch: JsonObject | undefined,
  live: JsonObject,
  member: ParentMetadata,
): JsonObject | undefined {
  const liveMeta = isJsonObject(live['metadata']) ? live['metadata'] : {};
  const has = (field: 'labels' | 'annotations', want: Readonly<Record<string, string>>) => {
    const map = isJsonObject(liveMeta[field]) ? liveMeta[field] : {};
    return Object.entries(want).every(([key, value]) => map[key] === value);
  };
  const patchMeta = patch !== undefined && isJsonObject(patch['metadata']) ? patch['metadata'] : undefined;
  const removesAll = (field: 'labels' | 'annotations') =>
    patchMeta !== undefined && patchMeta[field] === null;
  const needLabels = !has('labels', member.labels) || removesAll('labels');
  const needAnnotations = !has('annotations', member.annotations) || removesAll('annotations');
  if (!needLabels && !needAnnotations) return patch;
  const merged = (field: 'labels' | 'annotations', want: Readonly<Record<string, string>>): JsonObject => {
    const current = patchMeta?.[field];
    if (current === null) {
      const liveMap = isJsonObject(liveMeta[field]) ? liveMeta[field] : {};
      return { ...Object.fromEntries(Object.keys(liveMap).map((key) => [key, null])), ...want };
    }
    return { ...(isJsonObject(current) ? current : {}), ...want };
  };
  return {
    ...(patch ?? {}),
    metadata: {
      ...(patchMeta ?? {}),
      ...(needLabels ? { labels: merged('labels', member.labels) } : {}),
      ...(needAnnotations ? { annotations: merged('annotations', member.annotations) } : {}),
    },
  };
}

/**
 * An object new to the inventory whose apply failed without anything being written: its read failed
 * (no write was sent), or the server refused the write outright (a 4xx: forbidden, invalid, a
 * conflict). Nothing of ours can exist under that name, so it leaves the inventory at the narrow step
 * instead of becoming a prune candidate that a set without the right to read it could never judge.
 * A timeout, a 5xx or a lost connection may have written it: such an object stays.
 */
function neverWritten(
  action: ApplyAction,
  outcome: ObjectOutcome,
  inventoryOld: ReadonlySet<string>,
): boolean {
  if (outcome.action !== 'failed' || inventoryOld.has(objectRefKey(action.ref))) return false;
  if (action.type === 'unknown-read') return true;
  const cause = outcome.cause;
  return cause instanceof KubeApiError && cause.status >= 400 && cause.status < 500 && cause.status !== 429;
}

/** Patches the server took without a change, kept per object; bounded, since the engine lives long. */
const MAX_REMEMBERED_NO_OPS = 100_000;

function rememberNoOp(noOps: Map<string, string>, key: string, value: string): void {
  if (noOps.size >= MAX_REMEMBERED_NO_OPS && !noOps.has(key)) noOps.clear();
  noOps.set(key, value);
}

/** kubectl's defaults: its own field manager name, and unknown or duplicate fields refused. */
export const DEFAULT_FIELD_MANAGER = 'kubectl-client-side-apply';

function writeOptions(request: ApplySetRequest, warnings: string[]): WriteOptions {
  const validation = request.fieldValidation ?? 'strict';
  return {
    fieldManager: request.fieldManager ?? DEFAULT_FIELD_MANAGER,
    fieldValidation: validation === 'strict' ? 'Strict' : validation === 'warn' ? 'Warn' : 'Ignore',
    onWarning: (warning) => warnings.push(warning),
  };
}

function warned(warnings: readonly string[]): { warnings?: readonly string[] } {
  return warnings.length === 0 ? {} : { warnings: [...warnings] };
}

function gvkOf(object: ManifestObject): GroupVersionKind {
  return { group: object.ref.group, version: object.version, kind: object.ref.kind };
}

function resourceVersionOf(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  const version = isJsonObject(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

function uidOf(object: JsonObject): string | undefined {
  const metadata = object['metadata'];
  const uid = isJsonObject(metadata) ? metadata['uid'] : undefined;
  return typeof uid === 'string' ? uid : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

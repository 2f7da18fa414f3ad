import { rethrowAbort } from '../errors/rethrow-abort.js';
import { liveResourceVersion, liveUid } from '../inventory/live-state.js';
import { withMemberPatch } from '../inventory/member-metadata.js';
import { mayApply } from '../inventory/ownership-policy.js';
import type { JsonObject } from '../manifests/json-value.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { objectRefKey } from '../manifests/object-ref.js';
import { applyStrategicMergePatch } from '../merge/apply-strategic-merge-patch.js';
import { computeApplyPatch } from '../merge/compute-apply-patch.js';
import { encodeGoJson } from '../merge/encode-go-json.js';
import { applyJsonMergePatch } from '../merge/json-merge-patch.js';
import {
  LAST_APPLIED_ANNOTATION,
  readLastAppliedConfiguration,
} from '../merge/last-applied-configuration.js';
import type { PatchMeta } from '../merge/patch-meta.js';
import { diffFields, formatFieldChange, maskSecretValue } from '../plan/diff-fields.js';
import { foldStringData } from '../plan/fold-string-data.js';
import { isSecretManifest } from '../manifests/redact-secret-values.js';
import { ignoredPathsFor, maskIgnoredFields } from '../plan/drift-ignore.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { PatchContentType } from '../kube/kube-object-api.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { clientSideCreateBody } from './client-side-create-body.js';
import { conflictMessage } from './conflict-message.js';
import { deleteAndWait } from './delete-and-wait.js';
import { changedFields, fieldsPatchWouldChange } from './drift-check.js';
import { gvkOf, locationOf } from './object-location.js';
import type { ObjectContext } from './run-context.js';
import { serverDryRunUpdate } from './server-dry-run.js';
import { warned, writeOptions } from './write-options.js';

/*
 * One object of the set written as kubectl apply writes it: created when absent, else patched with the
 * three-way patch; a 409 is answered by a re-read and a new judgement (kubectl's maxPatchRetry), an
 * immutable field by delete and recreate when forced.
 */

/** kubectl's maxPatchRetry: a 409 on PATCH is answered by a re-read and a new patch, five times. */
const MAX_CONFLICT_RETRIES = 5;

/** An update of a live object without an apply-owner took it over: the outcome says so. */
export function markAdopted(outcome: ObjectOutcome): ObjectOutcome {
  return outcome.action === 'configured' ||
    outcome.action === 'unchanged' ||
    outcome.action === 'would-configure'
    ? { ...outcome, adopted: true }
    : outcome;
}

/**
 * kubectl's create of an object found absent. `unread`: the object was not read first (new to the set,
 * prepare-run.ts); a refusal of any kind may then mean it exists (a 409, or a create the account may
 * not make, or a partial manifest the server cannot create but could patch), so it is read and judged
 * as kubectl would have judged it after its GET; absent, the refusal stands.
 */
export async function createObject(
  object: ManifestObject,
  context: ObjectContext,
  attempt: number,
  unread = false,
): Promise<ObjectOutcome> {
  const { signal } = context;
  const location = await locationOf(object, context);
  const body = clientSideCreateBody(object, context.member);
  const warnings: string[] = [];
  try {
    await context.api.create(location, body, signal, writeOptions(context.write, warnings));
    return { action: 'created', ref: object.ref, ...warned(warnings) };
  } catch (error) {
    if (unread && error instanceof KubeApiError && error.status !== 409) {
      return reconcileWithLive(object, context, attempt + 1, error);
    }
    if (!(error instanceof KubeApiError && error.status === 409) || attempt >= MAX_CONFLICT_RETRIES)
      throw error;
    // Created meanwhile by someone else: judge it as kubectl would judge a live object.
    return reconcileWithLive(object, context, attempt + 1);
  }
}

/** Reads the object and judges it; absent, it is created again, or `refused` (the create's error) stands. */
async function reconcileWithLive(
  object: ManifestObject,
  context: ObjectContext,
  attempt: number,
  refused?: KubeApiError,
): Promise<ObjectOutcome> {
  const location = await locationOf(object, context);
  let live: JsonObject | undefined;
  try {
    live = await context.api.get(location, object.ref.name, context.signal);
  } catch (error) {
    rethrowAbort(error);
    // A read refused too (no right to get it): the create's own refusal is the answer.
    throw refused ?? error;
  }
  if (live === undefined && refused !== undefined) throw refused;
  if (live === undefined) return createObject(object, context, attempt);
  const verdict = mayApply(
    { status: 'present', object: live },
    { ownerUid: context.ownerUid, adopt: context.write.adopt },
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

export async function updateObject(
  object: ManifestObject,
  live: JsonObject,
  context: ObjectContext,
  attempt: number,
): Promise<ObjectOutcome> {
  const update = await planUpdate(object, live, context);
  if (update === undefined) return { action: 'unchanged', ref: object.ref };
  // driftMode Warn: a dry run reports the drift the real run below would report, and nothing more.
  if (context.write.dryRun && context.write.drift?.correct === false)
    return driftLeftAlone(object, live, update);
  if (context.write.dryRun && context.write.askServer === true) {
    const recreated = () => previewUpdate(object, live, update);
    return serverDryRunUpdate(object, live, context, { ...update, recreated });
  }
  if (context.write.dryRun) return previewUpdate(object, live, update);

  // Some patches change nothing on the server, every time (a Secret's stringData, a PDB selector,
  // `readOnly: false`): kubectl says `configured` for them on every apply. We say what the server did,
  // and do not send again the patch it ignored while the object is still at the version it ignored
  // it at.
  const noOpKey = `${objectRefKey(object.ref)}\n${liveUid(live) ?? ''}`;
  const noOp = `${liveResourceVersion(live) ?? ''}\n${update.contentType}\n${update.body}`;
  if (context.serverNoOps.has(noOpKey, noOp)) return { action: 'unchanged', ref: object.ref };
  // driftMode Warn on an unchanged revision: say what the patch would change, and send nothing.
  if (context.write.drift?.correct === false) return driftLeftAlone(object, live, update);
  return sendUpdate(object, live, context, attempt, update, { key: noOpKey, value: noOp });
}

/** driftMode Warn: the object is left as it is, with the fields the patch would have changed. */
function driftLeftAlone(object: ManifestObject, live: JsonObject, update: PlannedUpdate): ObjectOutcome {
  const drift = fieldsPatchWouldChange(live, update.patch, update.meta);
  return { action: 'unchanged', ref: object.ref, ...(drift.length === 0 ? {} : { drift }) };
}

/** The three-way patch for one live object, as kubectl computes it, with the set's marks added. */
interface PlannedUpdate {
  readonly meta: PatchMeta | 'json-merge';
  readonly computed: ReturnType<typeof computeApplyPatch>;
  readonly patch: JsonObject;
  readonly body: string;
  readonly contentType: PatchContentType;
}

/** The patch to send, or undefined when there is nothing to change. */
async function planUpdate(
  object: ManifestObject,
  live: JsonObject,
  context: ObjectContext,
): Promise<PlannedUpdate | undefined> {
  const meta: PatchMeta | 'json-merge' = await context.patchMeta.metaFor(gvkOf(object), context.signal);
  // spec.driftIgnore: the merge sees the ignored fields as last applied, so only Git changes them.
  const ignored = ignoredPathsFor(context.write.drift?.ignore ?? [], object.ref);
  const current =
    ignored.length === 0
      ? live
      : maskIgnoredFields(live, readLastAppliedConfiguration(live) ?? undefined, ignored);
  const computed = computeApplyPatch({ manifest: object.manifest, current, meta });
  const patch = withMemberPatch(computed.kind === 'patch' ? computed.patch : undefined, live, context.member);
  if (patch === undefined) return undefined;
  const body = computed.kind === 'patch' && patch === computed.patch ? computed.body : encodeGoJson(patch);
  const contentType =
    meta === 'json-merge' ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json';
  return { meta, computed, patch, body, contentType };
}

/** A dry run: the fields the patch would change, as the server would apply it, and nothing sent. */
function previewUpdate(object: ManifestObject, live: JsonObject, update: PlannedUpdate): ObjectOutcome {
  const { meta, patch } = update;
  const after =
    meta === 'json-merge'
      ? (applyJsonMergePatch(live, patch) as JsonObject)
      : applyStrategicMergePatch(live, patch, meta);
  // A Secret's values never reach the diff (it is printed, and pasted into pull requests); its
  // stringData is compared as the data the server would make of it, key by key.
  const secret = isSecretManifest(object.manifest);
  const diff = (secret ? diffFields(foldStringData(live), foldStringData(after)) : diffFields(live, after))
    .filter((change) => !change.path.includes(LAST_APPLIED_ANNOTATION))
    .map((change) => formatFieldChange(secret ? maskSecretValue(change) : change));
  return diff.length === 0 && update.computed.kind === 'unchanged'
    ? { action: 'unchanged', ref: object.ref }
    : { action: 'would-configure', ref: object.ref, diff };
}

/**
 * PATCH, and what the server did with it: unchanged when it kept the resourceVersion (remembered, so
 * the same patch is not sent again), configured otherwise; a 409 judges the object again, an
 * immutable field recreates it when forced.
 */
async function sendUpdate(
  object: ManifestObject,
  live: JsonObject,
  context: ObjectContext,
  attempt: number,
  update: PlannedUpdate,
  noOp: { readonly key: string; readonly value: string },
): Promise<ObjectOutcome> {
  const location = await locationOf(object, context);
  const warnings: string[] = [];
  try {
    const after = await context.api.patch(
      location,
      object.ref.name,
      update.contentType,
      update.body,
      context.signal,
      writeOptions(context.write, warnings),
    );
    if (
      liveResourceVersion(after) !== undefined &&
      liveResourceVersion(after) === liveResourceVersion(live)
    ) {
      context.serverNoOps.remember(noOp.key, noOp.value);
      return { action: 'unchanged', ref: object.ref, ...warned(warnings) };
    }
    context.serverNoOps.forget(noOp.key);
    return {
      action: 'configured',
      ref: object.ref,
      changed: changedFields(live, after),
      ...warned(warnings),
    };
  } catch (error) {
    if (!(error instanceof KubeApiError)) throw error;
    if (error.status === 409 && attempt < MAX_CONFLICT_RETRIES) {
      return reconcileWithLive(object, context, attempt + 1);
    }
    if (!error.immutableField) throw error;
    if (!context.write.force) {
      return {
        action: 'failed',
        ref: object.ref,
        message: `${error.detail} (a field that cannot change was changed; apply with --force to delete and recreate the object)`,
        cause: error,
      };
    }
    await deleteAndWait(location, object.ref.name, liveUid(live), context);
    await createObject(object, context, attempt);
    return { action: 'configured', ref: object.ref };
  }
}

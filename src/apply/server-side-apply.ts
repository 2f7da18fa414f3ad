import { annotationBytes, TOTAL_ANNOTATION_LIMIT_BYTES } from '../inventory/inventory-encoding.js';
import { liveAnnotation, liveResourceVersion, liveUid } from '../inventory/live-state.js';
import { withMember } from '../inventory/member-metadata.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { isSecretManifest } from '../manifests/redact-secret-values.js';
import { diffFields, formatFieldChange, maskSecretValue } from '../plan/diff-fields.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { objectRefKey } from '../manifests/object-ref.js';
import {
  buildCreateBody,
  buildLastAppliedConfiguration,
  LAST_APPLIED_ANNOTATION,
} from '../merge/last-applied-configuration.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { locationOf } from './object-location.js';
import type { ObjectContext } from './run-context.js';
import { createdFirstByTheRun, withoutServerFields } from './server-dry-run.js';
import { warned, writeOptions } from './write-options.js';
import { stringifyJson } from '../manifests/lossless-json.js';

/** The annotation on a manifest that asks for server-side apply whatever its size. */
const APPLY_STRATEGY_ANNOTATION = 'applyset.dev/apply-strategy';
/** The field manager of our server-side applies. */
const SERVER_SIDE_FIELD_MANAGER = 'applyset';

/**
 * Why this object must be applied server-side, or undefined for kubectl's client-side apply. The
 * last-applied annotation holds the whole object, so a large one (kube-prometheus's CRDs: 350-480 KB)
 * would take the object's annotations past the server's 256 KiB limit: kubectl apply fails on it, and
 * so would we. Such an object, and any whose manifest asks with `applyset.dev/apply-strategy:
 * server-side` (kept on the object, like Argo CD's sync options), is applied server-side instead.
 */
export function serverSideReason(object: ManifestObject): string | undefined {
  if (liveAnnotation(object.manifest, APPLY_STRATEGY_ANNOTATION) === 'server-side') {
    return `${APPLY_STRATEGY_ANNOTATION}: server-side`;
  }
  // The annotation is the object once more, and the object's own annotations are counted twice at
  // most: an object whose JSON is under half the limit cannot be over it, and costs nothing more here.
  if (stringifyJson(object.manifest).length * 2 < TOTAL_ANNOTATION_LIMIT_BYTES) return undefined;
  const { modified } = buildLastAppliedConfiguration(object.manifest);
  const metadata = isJsonObject(modified['metadata']) ? modified['metadata'] : {};
  const annotations = isJsonObject(metadata['annotations']) ? metadata['annotations'] : {};
  const bytes = annotationBytes(
    Object.fromEntries(
      Object.entries(annotations).map(([key, value]) => [key, typeof value === 'string' ? value : null]),
    ),
  );
  if (bytes <= TOTAL_ANNOTATION_LIMIT_BYTES) return undefined;
  return `annotation would be ${Math.round(bytes / 1000)} KB`;
}

/**
 * Server-side apply of one object (field manager `applyset`, force): the file as the applied
 * configuration, with the set's ownership marks and without a last-applied annotation. Reported as
 * created / configured / unchanged by what the server did (its resourceVersion), marked `serverSide`.
 * An object that was applied client-side before loses its stale last-applied annotation in a second,
 * one-time patch, so a later client-side apply does not take it for the original. A dry run sends the
 * same apply with `dryRun=All` (see previewOf), so it gets the same warnings from the server.
 */
export async function serverSideApply(
  object: ManifestObject,
  live: JsonObject | undefined,
  reason: string,
  context: ObjectContext,
): Promise<ObjectOutcome> {
  const serverSide = { serverSide: reason };
  // A new object's local dry run asks nothing of the server; one the server judges (askServer) is
  // sent, unless the run would first create its namespace or its CRD.
  if (context.write.dryRun && live === undefined && context.write.askServer !== true)
    return { action: 'would-create', ref: object.ref, ...serverSide };
  const body = stringifyJson(buildCreateBody(withMember(object.manifest, context.member)));
  // As for client-side patches: the same apply to the same version is not sent again (the
  // controller's interval re-apply of an unchanged object writes nothing).
  const noOpKey = `${objectRefKey(object.ref)}\n${live === undefined ? '' : (liveUid(live) ?? '')}`;
  const noOp = `${live === undefined ? '' : (liveResourceVersion(live) ?? '')}\nserver-side\n${body}`;
  if (!context.write.dryRun && live !== undefined && context.serverNoOps.has(noOpKey, noOp)) {
    return { action: 'unchanged', ref: object.ref, ...serverSide };
  }
  const warnings: string[] = [];
  let after: JsonObject;
  try {
    const location = await locationOf(object, context);
    after = await context.api.patch(
      location,
      object.ref.name,
      'application/apply-patch+yaml',
      body,
      context.signal,
      {
        ...writeOptions(context.write, warnings),
        fieldManager: SERVER_SIDE_FIELD_MANAGER,
        force: true,
        ...(context.write.dryRun ? { dryRun: true } : {}),
      },
    );
  } catch (error) {
    if (context.write.dryRun && live === undefined && createdFirstByTheRun(error))
      return { action: 'would-create', ref: object.ref, ...serverSide };
    throw error;
  }
  if (live === undefined && context.write.dryRun)
    return { action: 'would-create', ref: object.ref, ...warned(warnings), ...serverSide };
  if (live !== undefined && context.write.dryRun) {
    return { ...previewOf(object, live, after, reason), ...warned(warnings) };
  }
  if (live !== undefined && liveAnnotation(live, LAST_APPLIED_ANNOTATION) !== undefined) {
    await context.api.patch(
      await locationOf(object, context),
      object.ref.name,
      'application/merge-patch+json',
      stringifyJson({ metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: null } } }),
      context.signal,
    );
  }
  const action =
    live === undefined
      ? 'created'
      : liveResourceVersion(after) === liveResourceVersion(live)
        ? 'unchanged'
        : 'configured';
  if (action === 'unchanged') context.serverNoOps.remember(noOpKey, noOp);
  else context.serverNoOps.forget(noOpKey);
  return { action, ref: object.ref, ...warned(warnings), ...serverSide };
}

/**
 * What a dry run of the server-side apply of a live object says, from the object the server computed
 * and kept nothing of. It changes the object when a field changes, when the fields change managers (the
 * server then writes a new resourceVersion, as a real run would report `configured`), or when the
 * stale last-applied annotation would be removed; otherwise it is unchanged, as the real run says.
 */
function previewOf(
  object: ManifestObject,
  live: JsonObject,
  after: JsonObject,
  reason: string,
): ObjectOutcome {
  const secret = isSecretManifest(object.manifest);
  const diff = diffFields(withoutServerFields(live), withoutServerFields(after))
    .filter((change) => !change.path.includes(LAST_APPLIED_ANNOTATION))
    .map((change) => formatFieldChange(secret ? maskSecretValue(change) : change));
  const managersMove = stringifyJson(managers(live)) !== stringifyJson(managers(after));
  const dropsAnnotation = liveAnnotation(live, LAST_APPLIED_ANNOTATION) !== undefined;
  if (diff.length === 0 && !managersMove && !dropsAnnotation) {
    return { action: 'unchanged', ref: object.ref, serverSide: reason };
  }
  const shown = diff.length === 0 ? [`(applied server-side: ${reason})`] : diff;
  return { action: 'would-configure', ref: object.ref, diff: shown, serverSide: reason };
}

/** Who manages which fields, without the times the server stamps on each entry. */
function managers(object: JsonObject): JsonValue[] {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const entries = Array.isArray(metadata['managedFields']) ? metadata['managedFields'] : [];
  return entries.map((entry) => {
    if (!isJsonObject(entry)) return entry;
    const { time: _time, ...rest } = entry;
    return rest;
  });
}

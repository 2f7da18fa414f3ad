import { KubeApiError, UnknownKindError } from '../kube/kube-api-error.js';
import type { PatchContentType } from '../kube/kube-object-api.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { isSecretManifest } from '../manifests/redact-secret-values.js';
import { LAST_APPLIED_ANNOTATION } from '../merge/last-applied-configuration.js';
import { diffFields, formatFieldChange, maskSecretValue } from '../plan/diff-fields.js';
import type { ObjectOutcome } from './apply-set-contract.js';
import { clientSideCreateBody } from './client-side-create-body.js';
import { locationOf } from './object-location.js';
import type { ObjectContext } from './run-context.js';
import { warned, writeOptions } from './write-options.js';

/*
 * A dry run the API server judges (WritePolicy.askServer), as `kubectl diff` computes its diff: the
 * exact create or three-way-merge PATCH the real run would send, sent with `dryRun=All` as the run's
 * identity. The server validates it (a 422 such as a Service port's protocol `TCPX`), runs its
 * admission webhooks and ValidatingAdmissionPolicies (a refusal is the object's failure; a mutating
 * webhook's change is in its answer), and keeps nothing. A refusal is thrown, as the real write's
 * would be, and reported for its object by the caller (applyAction).
 */

/**
 * A create judged by the server. Unjudged, as before, when the server cannot judge it yet because
 * the run would first create what it needs: its namespace (404) or its kind's CRD (unknown kind).
 */
export async function serverDryRunCreate(
  object: ManifestObject,
  context: ObjectContext,
): Promise<ObjectOutcome> {
  const warnings: string[] = [];
  try {
    const location = await locationOf(object, context);
    const body = clientSideCreateBody(object, context.member);
    await context.api.create(location, body, context.signal, {
      ...writeOptions(context.write, warnings),
      dryRun: true,
    });
  } catch (error) {
    if (createdFirstByTheRun(error)) return { action: 'would-create', ref: object.ref };
    throw error;
  }
  return { action: 'would-create', ref: object.ref, ...warned(warnings) };
}

/**
 * A dry-run create the server could not judge because what it needs does not exist yet, and may be
 * created by the run before it: its namespace (404 on the namespace) or its kind's CRD (unknown kind).
 */
export function createdFirstByTheRun(error: unknown): boolean {
  if (error instanceof UnknownKindError) return true;
  return error instanceof KubeApiError && error.notFound && /namespaces? .*not found/i.test(error.detail);
}

/** The object without what the server changes on every write: its version, generation and managers. */
export function withoutServerFields(object: JsonObject): JsonObject {
  const metadata = isJsonObject(object['metadata']) ? object['metadata'] : {};
  const { resourceVersion: _version, generation: _generation, managedFields: _managers, ...rest } = metadata;
  return { ...object, metadata: rest };
}

/** The patch the real run would send to `live`, and what to say when only a recreate could apply it. */
export interface DryRunPatch {
  readonly contentType: PatchContentType;
  readonly body: string;
  /** `--force` on an immutable field: the run deletes and recreates; this is the outcome then. */
  readonly recreated: () => ObjectOutcome;
}

/**
 * An update judged by the server: the fields its answer changes against the live object (a Secret's
 * values masked), unchanged when it changes none, as the real run reports a PATCH the server kept as
 * it was.
 */
export async function serverDryRunUpdate(
  object: ManifestObject,
  live: JsonObject,
  context: ObjectContext,
  patch: DryRunPatch,
): Promise<ObjectOutcome> {
  const location = await locationOf(object, context);
  const warnings: string[] = [];
  let after: JsonObject;
  try {
    after = await context.api.patch(
      location,
      object.ref.name,
      patch.contentType,
      patch.body,
      context.signal,
      {
        ...writeOptions(context.write, warnings),
        dryRun: true,
      },
    );
  } catch (error) {
    if (!(error instanceof KubeApiError && error.immutableField)) throw error;
    if (context.write.force) return patch.recreated();
    return {
      action: 'failed',
      ref: object.ref,
      message: `${error.detail} (a field that cannot change was changed; apply with --force to delete and recreate the object)`,
      cause: error,
    };
  }
  const secret = isSecretManifest(object.manifest);
  const diff = diffFields(withoutServerFields(live), withoutServerFields(after))
    .filter((change) => !change.path.includes(LAST_APPLIED_ANNOTATION))
    .map((change) => formatFieldChange(secret ? maskSecretValue(change) : change));
  if (diff.length === 0) return { action: 'unchanged', ref: object.ref, ...warned(warnings) };
  return { action: 'would-configure', ref: object.ref, diff, ...warned(warnings) };
}

import { messageOf } from '../errors/message-of.js';
import { IntentError } from '../errors/intent-error.js';
import { rethrowAbort } from '../errors/rethrow-abort.js';
import PQueue from 'p-queue';
import { isJsonObject, stringItems, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { describeObjectRef, type ObjectRef } from '../manifests/object-ref.js';
import { isNamespace } from '../manifests/apply-waves.js';
import type { ListedObject } from '../plan/objects-of-others.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KubeObjectApi, ResourceLocation } from '../kube/kube-object-api.js';

/**
 * What a Namespace or a CRD holds could not be read completely: it is not deleted this run.
 * @internal The classifier test holds it to its intent.
 */
export class HeldObjectsUnknownError extends IntentError {
  override readonly name = 'HeldObjectsUnknownError';
  readonly code = 'HELD_OBJECTS_UNKNOWN';
  readonly intent = 'retryable';
  readonly reason = 'ApplyFailed';
  constructor(holder: ObjectRef, options: { cause: unknown }) {
    super(`cannot tell what ${describeObjectRef(holder)} holds: ${messageOf(options.cause)}`, options);
  }
}

export interface HeldObjectsContext {
  readonly client: KubeClient;
  readonly api: KubeObjectApi;
  readonly concurrency: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Everything a Namespace or CRD would take with it when deleted, read right before the delete: for a
 * Namespace, a LIST in it of every namespaced kind that allows `list` in every served API group (what
 * the namespace controller's deleter enumerates); for a CRD, a LIST of its kind across all namespaces.
 * Any failure (an aggregated API that does not answer, a LIST that is forbidden) rejects: a
 * Namespace is not deleted on a partial view, as the namespace controller itself stalls then.
 */
export async function listHeldObjects(
  holder: ObjectRef,
  live: JsonObject,
  context: HeldObjectsContext,
): Promise<ListedObject[]> {
  try {
    if (isNamespace(holder)) {
      const resources = await namespacedListableResources(context);
      const queue = new PQueue({ concurrency: context.concurrency });
      const lists = await queue.addAll(
        resources.map((resource) => () => listOrEmpty({ ...resource, namespace: holder.name }, context)),
        context.signal === undefined ? {} : { signal: context.signal },
      );
      return lists.flatMap((list) => list ?? []);
    }
    const resource = crdResource(live);
    if (resource === undefined) throw new Error('its spec names no served version, group and plural');
    return await listOrEmpty({ ...resource, namespace: '' }, context);
  } catch (error) {
    rethrowAbort(error);
    throw new HeldObjectsUnknownError(holder, { cause: error });
  }
}

type Resource = Omit<ResourceLocation, 'namespace'> & { readonly kind: string };

async function listOrEmpty(
  location: ResourceLocation & { readonly kind: string },
  context: HeldObjectsContext,
): Promise<ListedObject[]> {
  let items: JsonObject[];
  try {
    items = await context.api.list(location, location.kind, context.signal);
  } catch (error) {
    // The kind went away since discovery (a CRD deleted meanwhile): it holds nothing.
    if (error instanceof KubeApiError && error.notFound) return [];
    throw error;
  }
  return items.flatMap((object) => {
    const metadata = object['metadata'];
    const name = isJsonObject(metadata) ? metadata['name'] : undefined;
    const namespace = isJsonObject(metadata) ? metadata['namespace'] : undefined;
    if (typeof name !== 'string') return [];
    const ref = {
      group: location.group,
      kind: location.kind,
      namespace: typeof namespace === 'string' ? namespace : '',
      name,
    };
    return [{ ref, object }];
  });
}

/**
 * Discovery of every group (`/api`, `/apis`, then each group-version), like client-go's
 * ServerPreferredNamespacedResources: a resource served in several versions is listed once, at the
 * group's preferred version when it serves it there.
 */
async function namespacedListableResources(context: HeldObjectsContext): Promise<Resource[]> {
  const get = (path: string) => context.client.request({ method: 'GET', path, signal: context.signal });
  const [core, apis] = await Promise.all([get('/api'), get('/apis')]);
  const groupVersions: { group: string; version: string }[] = stringsAt(core, 'versions').map((version) => ({
    group: '',
    version,
  }));
  const groups = isJsonObject(apis) && Array.isArray(apis['groups']) ? apis['groups'] : [];
  for (const entry of groups) {
    if (!isJsonObject(entry) || typeof entry['name'] !== 'string') continue;
    const group = entry['name'];
    const preferred = isJsonObject(entry['preferredVersion'])
      ? entry['preferredVersion']['version']
      : undefined;
    const versions = (Array.isArray(entry['versions']) ? entry['versions'] : []).flatMap((v) =>
      isJsonObject(v) && typeof v['version'] === 'string' ? [v['version']] : [],
    );
    const ordered = [...versions].sort((a, b) => Number(b === preferred) - Number(a === preferred));
    groupVersions.push(...ordered.map((version) => ({ group, version })));
  }
  const queue = new PQueue({ concurrency: context.concurrency });
  const documents = await queue.addAll(
    groupVersions.map(({ group, version }) => async () => {
      const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
      try {
        return { group, version, body: await get(path) };
      } catch (error) {
        // A group-version removed since `/apis` was read serves nothing; any other failure is fatal.
        if (error instanceof KubeApiError && error.notFound) return { group, version, body: null };
        throw error;
      }
    }),
    context.signal === undefined ? {} : { signal: context.signal },
  );
  const seen = new Set<string>();
  const resources: Resource[] = [];
  for (const document of documents) {
    if (document === undefined) continue;
    const { group, version, body } = document;
    const entries = isJsonObject(body) && Array.isArray(body['resources']) ? body['resources'] : [];
    for (const entry of entries) {
      if (!isJsonObject(entry)) continue;
      const { name, kind, namespaced } = entry;
      // Subresources (`pods/log`) are not objects of their own.
      if (typeof name !== 'string' || typeof kind !== 'string' || name.includes('/')) continue;
      if (namespaced !== true || !stringsAt(entry, 'verbs').includes('list')) continue;
      if (seen.has(`${group}/${name}`)) continue;
      seen.add(`${group}/${name}`);
      resources.push({ group, version, resource: name, kind });
    }
  }
  return resources;
}

/** The kind a CRD serves, at its storage version when that is served, else its first served one. */
function crdResource(crd: JsonObject): Resource | undefined {
  const spec = crd['spec'];
  if (!isJsonObject(spec) || typeof spec['group'] !== 'string') return undefined;
  const names = spec['names'];
  const plural = isJsonObject(names) ? names['plural'] : undefined;
  const kind = isJsonObject(names) ? names['kind'] : undefined;
  const served = (Array.isArray(spec['versions']) ? spec['versions'] : []).filter(
    (v): v is JsonObject => isJsonObject(v) && v['served'] === true && typeof v['name'] === 'string',
  );
  const version = (served.find((v) => v['storage'] === true) ?? served[0])?.['name'];
  if (typeof plural !== 'string' || typeof kind !== 'string' || typeof version !== 'string') return undefined;
  return { group: spec['group'], version, resource: plural, kind };
}

function stringsAt(value: JsonValue, field: string): string[] {
  return stringItems(isJsonObject(value) ? value[field] : undefined);
}

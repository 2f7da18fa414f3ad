import PQueue from 'p-queue';
import type { LiveState } from '../inventory/live-state.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { objectRefKey, type ObjectRef } from '../manifests/object-ref.js';
import type { KubeObjectApi, ResourceLocation } from '../kube/kube-object-api.js';
import type { RestMapping } from '../kube/rest-mapper.js';

/** One object to read, with its mapping, or the reason it has none. */
export type ReadTarget =
  | { readonly ref: ObjectRef; readonly mapping: RestMapping }
  /** The kind is not served yet and its CRD comes with the set: the object cannot exist. */
  | { readonly ref: ObjectRef; readonly mapping: 'not-served' }
  /** The mapping failed (discovery error, kind gone): the object's state is unknown. */
  | { readonly ref: ObjectRef; readonly mapping: 'unmapped'; readonly error: unknown };

export interface LiveObjects {
  readonly live: ReadonlyMap<string, LiveState>;
  /** Every object the LISTs saw, by namespace, so the plan never prunes a Namespace still in use. */
  readonly namespaceMembers: ReadonlyMap<string, readonly ObjectRef[]>;
}

/**
 * Reads the live state of every target, the cheaper way for each kind and namespace: one LIST when
 * several objects share them, a GET for a single one. Any failure makes the objects concerned
 * `unknown`, never `absent`: the plan writes nothing over, and deletes nothing because of, a read
 * that did not succeed.
 */
export async function readLiveObjects(
  api: KubeObjectApi,
  targets: readonly ReadTarget[],
  options: { concurrency: number; signal?: AbortSignal },
): Promise<LiveObjects> {
  const live = new Map<string, LiveState>();
  const namespaceMembers = new Map<string, ObjectRef[]>();
  const groups = new Map<string, { location: ResourceLocation; kind: string; refs: ObjectRef[] }>();
  const seen = new Set<string>();
  for (const target of targets) {
    const key = objectRefKey(target.ref);
    if (seen.has(key)) continue;
    seen.add(key);
    if (target.mapping === 'not-served') {
      live.set(key, { status: 'absent' });
      continue;
    }
    if (target.mapping === 'unmapped') {
      live.set(key, { status: 'unknown', error: target.error });
      continue;
    }
    const { group, version, resource, kind } = target.mapping;
    const location = { group, version, resource, namespace: target.ref.namespace };
    const groupKey = `${group}/${resource}/${target.ref.namespace}`;
    const entry = groups.get(groupKey) ?? { location, kind, refs: [] };
    entry.refs.push(target.ref);
    groups.set(groupKey, entry);
  }

  const queue = new PQueue({ concurrency: options.concurrency });
  const { signal } = options;
  await queue.addAll(
    [...groups.values()].map(({ location, kind, refs }) => async () => {
      const only = refs.length === 1 ? refs[0] : undefined;
      try {
        if (only !== undefined) {
          const object = await api.get(location, only.name, signal);
          live.set(
            objectRefKey(only),
            object === undefined ? { status: 'absent' } : { status: 'present', object },
          );
          return;
        }
        const items = await api.list(location, kind, signal);
        const byName = new Map<string, JsonObject>();
        for (const item of items) {
          const metadata = item['metadata'];
          const name = isJsonObject(metadata) ? metadata['name'] : undefined;
          const namespace = isJsonObject(metadata) ? metadata['namespace'] : undefined;
          if (typeof name !== 'string') continue;
          byName.set(name, item);
          if (typeof namespace === 'string' && namespace !== '') {
            const members = namespaceMembers.get(namespace) ?? [];
            members.push({ group: location.group, kind, namespace, name });
            namespaceMembers.set(namespace, members);
          }
        }
        for (const ref of refs) {
          const object = byName.get(ref.name);
          live.set(
            objectRefKey(ref),
            object === undefined ? { status: 'absent' } : { status: 'present', object },
          );
        }
      } catch (error) {
        for (const ref of refs) live.set(objectRefKey(ref), { status: 'unknown', error });
      }
    }),
    { signal },
  );
  return { live, namespaceMembers };
}

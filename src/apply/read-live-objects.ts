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
  /** New to the set: not read, created by a POST the server refuses if it exists (create-unread). */
  | { readonly ref: ObjectRef; readonly mapping: 'create-unread' }
  /** The mapping failed (discovery error, kind gone): the object's state is unknown. */
  | { readonly ref: ObjectRef; readonly mapping: 'unmapped'; readonly error: unknown };

export interface LiveObjects {
  readonly live: ReadonlyMap<string, LiveState>;
  /** Every object the LISTs saw, by namespace, so the plan never prunes a Namespace still in use. */
  readonly namespaceMembers: ReadonlyMap<string, readonly ObjectRef[]>;
}

/**
 * How the LISTs are narrowed. `labelSelector` selects the set's own members (its part-of label), so
 * a LIST costs what the set holds, not what the namespace holds. `unfilteredNamespaces` are those
 * the plan may prune a Namespace for: there the LISTs stay unfiltered, because what they see of
 * others' objects is what keeps a Namespace still in use (`namespace-still-used`) at plan time.
 */
export interface LiveReadFilter {
  readonly labelSelector: string;
  readonly unfilteredNamespaces: ReadonlySet<string>;
}

/**
 * Past this many objects of one kind and namespace missing from a filtered LIST (a first apply of
 * many objects, or a set adopting many unlabelled ones), one unfiltered LIST is cheaper than a GET
 * each.
 */
const MAX_GETS_AFTER_FILTERED_LIST = 16;

interface ReadGroup {
  readonly location: ResourceLocation;
  readonly kind: string;
  readonly refs: ObjectRef[];
}

interface ReadState {
  readonly api: KubeObjectApi;
  readonly live: Map<string, LiveState>;
  readonly namespaceMembers: Map<string, ObjectRef[]>;
  readonly signal: AbortSignal | undefined;
}

/**
 * Reads the live state of every target, the cheaper way for each kind and namespace: a GET for a
 * single object; for several, one LIST (label-selected with a filter), then a GET for each object
 * the selected LIST did not return, since it may exist without the label (an object to adopt, one
 * whose label someone removed: it is read, never assumed absent). Any failure makes the objects
 * concerned `unknown`, never `absent`: the plan writes nothing over, and deletes nothing because
 * of, a read that did not succeed.
 */
export async function readLiveObjects(
  api: KubeObjectApi,
  targets: readonly ReadTarget[],
  options: { concurrency: number; signal?: AbortSignal; filter?: LiveReadFilter },
): Promise<LiveObjects> {
  const state: ReadState = { api, live: new Map(), namespaceMembers: new Map(), signal: options.signal };
  const groups = groupTargets(targets, state.live);
  const queue = new PQueue({ concurrency: options.concurrency });
  const queueOptions = options.signal === undefined ? {} : { signal: options.signal };
  const { filter } = options;
  // Two phases over one queue, so that no task waits on another for a slot.
  const missing = new Map<ReadGroup, ObjectRef[]>();
  await queue.addAll(
    groups.map((group) => async () => {
      if (group.refs.length === 1) return getEach(group, group.refs, state);
      if (filter === undefined || filter.unfilteredNamespaces.has(group.location.namespace)) {
        return listAll(group, undefined, state);
      }
      const found = await listAll(group, filter.labelSelector, state);
      if (found !== undefined)
        missing.set(
          group,
          group.refs.filter((ref) => !found.has(ref.name)),
        );
    }),
    queueOptions,
  );
  const followUps = [...missing].flatMap(([group, refs]) => followUpOf(group, refs));
  await queue.addAll(
    followUps.flatMap(({ group, refs, list }) =>
      list
        ? [async () => void (await listAll(group, undefined, state))]
        : refs.map((ref) => () => getEach(group, [ref], state)),
    ),
    queueOptions,
  );
  return { live: state.live, namespaceMembers: state.namespaceMembers };
}

/** What a filtered LIST left to read: nothing, a GET each, or one unfiltered LIST of them all. */
function followUpOf(group: ReadGroup, missing: readonly ObjectRef[]) {
  if (missing.length === 0) return [];
  const list = missing.length > MAX_GETS_AFTER_FILTERED_LIST;
  return [{ group: { ...group, refs: [...missing] }, refs: missing, list }];
}

function groupTargets(targets: readonly ReadTarget[], live: Map<string, LiveState>): ReadGroup[] {
  const groups = new Map<string, ReadGroup>();
  const seen = new Set<string>();
  for (const target of targets) {
    const key = objectRefKey(target.ref);
    if (seen.has(key)) continue;
    seen.add(key);
    if (target.mapping === 'not-served') {
      live.set(key, { status: 'absent' });
      continue;
    }
    if (target.mapping === 'create-unread') {
      live.set(key, { status: 'create-unread' });
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
  return [...groups.values()];
}

async function getEach(group: ReadGroup, refs: readonly ObjectRef[], state: ReadState): Promise<void> {
  for (const ref of refs) {
    try {
      const object = await state.api.get(group.location, ref.name, state.signal);
      state.live.set(
        objectRefKey(ref),
        object === undefined ? { status: 'absent' } : { status: 'present', object },
      );
    } catch (error) {
      state.live.set(objectRefKey(ref), { status: 'unknown', error });
    }
  }
}

/**
 * LISTs the group's kind and namespace and records what it saw. Unfiltered, a target the LIST did
 * not return is absent; filtered, it is left unset for a follow-up read. Returns the names seen, or
 * `undefined` when the LIST failed (every target is then `unknown`).
 */
async function listAll(
  group: ReadGroup,
  labelSelector: string | undefined,
  state: ReadState,
): Promise<Set<string> | undefined> {
  const { location, kind, refs } = group;
  let items: JsonObject[];
  try {
    const options = labelSelector === undefined ? undefined : { labelSelector };
    items = await state.api.list(location, kind, state.signal, options);
  } catch (error) {
    for (const ref of refs) state.live.set(objectRefKey(ref), { status: 'unknown', error });
    return undefined;
  }
  const byName = new Map<string, JsonObject>();
  for (const item of items) {
    const metadata = item['metadata'];
    const name = isJsonObject(metadata) ? metadata['name'] : undefined;
    const namespace = isJsonObject(metadata) ? metadata['namespace'] : undefined;
    if (typeof name !== 'string') continue;
    byName.set(name, item);
    if (typeof namespace === 'string' && namespace !== '') {
      const members = state.namespaceMembers.get(namespace) ?? [];
      members.push({ group: location.group, kind, namespace, name });
      state.namespaceMembers.set(namespace, members);
    }
  }
  for (const ref of refs) {
    const object = byName.get(ref.name);
    if (object !== undefined) state.live.set(objectRefKey(ref), { status: 'present', object });
    else if (labelSelector === undefined) state.live.set(objectRefKey(ref), { status: 'absent' });
  }
  return new Set(byName.keys());
}

import type { JsonValue } from '../manifests/json-value.js';
import type { GroupVersionKind } from '../manifests/object-ref.js';
import type { ScopeResolver } from '../manifests/scope-resolver.js';
import { mappingsOfResourceList, versionsOfApiGroup, type RestMapping } from './discovery-documents.js';
import { KubeApiError, UnknownKindError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';
import { LruMap } from './lru-map.js';

export type { RestMapping } from './discovery-documents.js';

/** What is known of a kind: the group, version and, when the kind is named, the kind. */
interface DiscoveryTarget {
  readonly group: string;
  readonly version: string;
  readonly kind?: string;
}

/**
 * Discovery limited to what a set needs: only the group-versions of its objects and of its inventory
 * are asked for (`GET /api/v1`, `GET /apis/<g>/<v>`, and `GET /apis/<g>` for the versions of a group,
 * for an inventory entry, which records no version), never a sweep of every API group.
 *
 * One mapper serves every identity of a server: the controller shares it between the ServiceAccounts
 * it impersonates, because discovery does not depend on who asks. The API server answers `/api`,
 * `/apis` and below with every resource it serves to any authenticated user (the `system:discovery`
 * ClusterRole, bound to `system:authenticated`); RBAC decides what a user may do with a resource, not
 * whether discovery lists it (test/kube/shared-discovery.itest.ts compares the answers).
 *
 * Answers are cached for the life of the mapper (at most `maxAnswers` of each kind, the least recently
 * used dropped first), but an answer that lacks a kind someone asks for (a
 * 404 for the group-version, or the kind absent from it) is asked again once it is older than
 * `recheckAfterMs`, and at most once per run (`forRun`): a CRD installed after the first failure is
 * seen without a restart, as kubectl's deferred discovery mapper resets on a miss, while a set full of
 * unknown kinds costs one request per group-version and run.
 */
export interface RestMapper {
  /**
   * Loads the group-versions not yet cached, concurrently; a group-version whose cached answer lacks
   * a named kind is asked again when the recheck allows it.
   */
  load(targets: Iterable<DiscoveryTarget>, signal?: AbortSignal): Promise<void>;
  /** The mapping from the cache, or undefined; no request. */
  cached(gvk: GroupVersionKind): RestMapping | undefined;
  /** The mapping; asks the server again, when the recheck allows it, if the kind is not in the cache. */
  resolve(gvk: GroupVersionKind, signal?: AbortSignal): Promise<RestMapping>;
  /**
   * The mapping of a group and kind (inventory entries record no version): the group's preferred
   * version first, then the other served versions in the server's order.
   */
  resolveGroupKind(group: string, kind: string, signal?: AbortSignal): Promise<RestMapping>;
  /** Asks about the group-version now, whatever the cache holds (a CRD of the set was just created). */
  refresh(group: string, version: string, signal?: AbortSignal): Promise<void>;
  /** A synchronous view of the cache for `parseManifestSet`. */
  scopeResolver(): ScopeResolver;
  /** A view sharing this cache in which an unknown kind asks each group-version again at most once. */
  forRun(): RestMapper;
}

export interface RestMapperOptions {
  /** How old an answer lacking a wanted kind must be before the server is asked again; default 10 s. */
  readonly recheckAfterMs?: number;
  readonly now?: () => number;
  /**
   * Answers kept per cache (group-versions, groups), the least recently used dropped past it: a
   * manifest may name any apiVersion, and each one the server does not serve is an answer too (a 404).
   */
  readonly maxAnswers?: number;
}

const DEFAULT_DISCOVERY_RECHECK_MS = 10_000;
/** Far more group-versions than a server serves (a v1.33 apiserver: about 30, plus its CRDs). */
const DEFAULT_MAX_DISCOVERY_ANSWERS = 2_000;

export function createRestMapper(client: KubeClient, options: RestMapperOptions = {}): RestMapper {
  const now = options.now ?? Date.now;
  const maxAnswers = options.maxAnswers ?? DEFAULT_MAX_DISCOVERY_ANSWERS;
  // A 404 is an answer (nothing served there yet); any other failure is not cached.
  const getOrEmpty = async (path: string, signal: AbortSignal | undefined): Promise<JsonValue> => {
    try {
      return await client.request({ method: 'GET', path, signal });
    } catch (error) {
      if (error instanceof KubeApiError && error.notFound) return {};
      throw error;
    }
  };
  return mapperView(
    {
      now,
      recheckAfterMs: options.recheckAfterMs ?? DEFAULT_DISCOVERY_RECHECK_MS,
      groupVersions: createAnswerCache(now, maxAnswers, async (key: string, signal) => {
        const { group, version } = splitKey(key);
        const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
        return mappingsOfResourceList(await getOrEmpty(path, signal), group, version);
      }),
      groups: createAnswerCache(now, maxAnswers, async (group: string, signal) =>
        versionsOfApiGroup(await getOrEmpty(`/apis/${group}`, signal)),
      ),
    },
    undefined,
  );
}

/** The cache every view of one mapper shares. */
interface Discovery {
  readonly now: () => number;
  readonly recheckAfterMs: number;
  /** `GET /api/v1`, `GET /apis/<g>/<v>`, keyed by `keyOf`. */
  readonly groupVersions: AnswerCache<ReadonlyMap<string, RestMapping>>;
  /** `GET /apis/<g>`: the versions of a group, preferred first. */
  readonly groups: AnswerCache<readonly string[]>;
}

/** What one view asked again: a run's view asks each group-version again at most once. */
type AskedAgain = Set<string> | undefined;

/** A view of the shared cache; a run's view (`askedAgain` set) remembers what it asked again. */
function mapperView(discovery: Discovery, askedAgain: AskedAgain): RestMapper {
  const { groupVersions } = discovery;
  const mapper: RestMapper = {
    async load(targets, signal) {
      const wanted = new Map<string, Set<string>>();
      for (const { group, version, kind } of targets) {
        const kinds = wanted.get(keyOf(group, version)) ?? new Set<string>();
        if (kind !== undefined) kinds.add(kind);
        wanted.set(keyOf(group, version), kinds);
      }
      await Promise.all(
        [...wanted].map(async ([key, kinds]) => {
          const known = await groupVersions.get(key, signal);
          if ([...kinds].some((kind) => !known.has(kind))) {
            await recheck(discovery, askedAgain, discovery.groupVersions, key, signal);
          }
        }),
      );
    },
    cached: (gvk) => groupVersions.settled(keyOf(gvk.group, gvk.version))?.get(gvk.kind),
    async resolve(gvk, signal) {
      const found = await kindAt(discovery, askedAgain, gvk, signal);
      if (found !== undefined) return found;
      throw new UnknownKindError(
        gvk.group,
        gvk.kind,
        gvk.version,
        'is its CustomResourceDefinition installed?',
      );
    },
    resolveGroupKind: (group, kind, signal) => resolveGroupKind(discovery, askedAgain, group, kind, signal),
    async refresh(group, version, signal) {
      await groupVersions.ask(keyOf(group, version), signal);
    },
    scopeResolver: () => ({ scopeOf: (gvk) => mapper.cached(gvk)?.scope }),
    forRun: () => mapperView(discovery, new Set()),
  };
  return mapper;
}

/**
 * The current answer, asked anew first when it is old enough and this run has not asked it again
 * yet; a request already in flight is shared.
 */
function recheck<T>(
  discovery: Discovery,
  askedAgain: AskedAgain,
  cache: AnswerCache<T>,
  key: string,
  signal: AbortSignal | undefined,
): Promise<T> {
  const runKey = `${cache === discovery.groups ? 'group' : 'group-version'} ${key}`;
  const askedAt = cache.askedAt(key);
  const allowed =
    askedAt === undefined ||
    (!(askedAgain?.has(runKey) ?? false) && discovery.now() - askedAt >= discovery.recheckAfterMs);
  if (!allowed) return cache.get(key, signal);
  askedAgain?.add(runKey);
  return cache.ask(key, signal);
}

/** The kind at one group-version, from the cache, else asked again when the recheck allows it. */
async function kindAt(
  discovery: Discovery,
  askedAgain: AskedAgain,
  gvk: GroupVersionKind,
  signal: AbortSignal | undefined,
): Promise<RestMapping | undefined> {
  const key = keyOf(gvk.group, gvk.version);
  return (
    (await discovery.groupVersions.get(key, signal)).get(gvk.kind) ??
    (await recheck(discovery, askedAgain, discovery.groupVersions, key, signal)).get(gvk.kind)
  );
}

/**
 * kubectl's RESTMapping for a group-kind without a version: every served version of the group, the
 * preferred first, until one has the kind.
 */
async function resolveGroupKind(
  discovery: Discovery,
  askedAgain: AskedAgain,
  group: string,
  kind: string,
  signal: AbortSignal | undefined,
): Promise<RestMapping> {
  const versionsOf = async (again: boolean): Promise<readonly string[]> => {
    if (group === '') return ['v1'];
    return again
      ? recheck(discovery, askedAgain, discovery.groups, group, signal)
      : discovery.groups.get(group, signal);
  };
  for (const version of await versionsOf(false)) {
    const found = (await discovery.groupVersions.get(keyOf(group, version), signal)).get(kind);
    if (found !== undefined) return found;
  }
  // Unknown at every version we knew of: the group may have gained versions or kinds since.
  const versions = await versionsOf(true);
  for (const version of versions) {
    const found = await kindAt(discovery, askedAgain, { group, version, kind }, signal);
    if (found !== undefined) return found;
  }
  throw new UnknownKindError(
    group,
    kind,
    undefined,
    versions.length === 0
      ? 'the API group is not served'
      : `no served version of the group has it (${versions.join(', ')})`,
  );
}

interface AnswerCache<T> {
  /** The cached answer (or the request in flight); asks when there is none. */
  get(key: string, signal?: AbortSignal): Promise<T>;
  /** Asks now; concurrent `get`s share this request. */
  ask(key: string, signal?: AbortSignal): Promise<T>;
  /** When the current answer was asked for; undefined when never asked or the last ask failed. */
  askedAt(key: string): number | undefined;
  /** The last answer received, for synchronous lookups. */
  settled(key: string): T | undefined;
}

function createAnswerCache<T>(
  now: () => number,
  maxAnswers: number,
  fetch: (key: string, signal: AbortSignal | undefined) => Promise<T>,
): AnswerCache<T> {
  // Promises, not values, so concurrent lookups of one document share a single request. An answer
  // dropped from either map past the bound is only asked again when next needed.
  const pending = new LruMap<string, { readonly answer: Promise<T>; readonly askedAt: number }>(maxAnswers);
  const received = new LruMap<string, T>(maxAnswers);
  const ask = (key: string, signal?: AbortSignal): Promise<T> => {
    const answer = fetch(key, signal);
    const entry = { answer, askedAt: now() };
    pending.set(key, entry);
    answer.then(
      (value) => {
        if (pending.peek(key) === entry) received.set(key, value);
      },
      // A failed request is not an answer: the next lookup asks again.
      () => {
        if (pending.peek(key) === entry) pending.delete(key);
      },
    );
    return answer;
  };
  return {
    get: (key, signal) => pending.get(key)?.answer ?? ask(key, signal),
    ask,
    askedAt: (key) => pending.peek(key)?.askedAt,
    settled: (key) => received.get(key),
  };
}

function keyOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function splitKey(key: string): { group: string; version: string } {
  const slash = key.lastIndexOf('/');
  return slash < 0
    ? { group: '', version: key }
    : { group: key.slice(0, slash), version: key.slice(slash + 1) };
}

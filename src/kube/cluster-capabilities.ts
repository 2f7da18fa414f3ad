/**
 * What `helm install` reads of a cluster as `.Capabilities` (its version and every API version it
 * serves), read once and kept, so that a chart rendered for a cluster sees the cluster as helm would.
 * Discovery does not depend on who asks (see createRestMapper): one source per connection serves every
 * ApplySet and account.
 */
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { KubeClient } from './kube-client.js';

/** A cluster's capabilities, as `helm template --kube-version --api-versions` takes them. */
export interface ClusterCapabilities {
  /** `/version`'s gitVersion without its `v` (`1.33.13`, `1.30.2+k3s1`): helm's `--kube-version`. */
  readonly kubeVersion: string;
  /**
   * Every `group/version` and `group/version/Kind` discovery lists (`v1`, `v1/Pod`, `apps/v1/Scale`),
   * sorted: helm's `--api-versions`, as helm install builds its version set from discovery.
   */
  readonly apiVersions: readonly string[];
}

/** How long an answer is used before discovery is asked again: a CRD installed since is seen then. */
const DEFAULT_CAPABILITIES_TTL_MS = 5 * 60_000;

/** Aggregated discovery (Kubernetes 1.30 and later): every group, version and kind in one answer. */
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

/**
 * The capabilities of the cluster `client` reaches, asked at most once per `ttlMs` (concurrent asks
 * share one request); a failed ask is not kept. Three GETs (`/version`, `/api`, `/apis`, the last two
 * in aggregated discovery), or, from a server without it, one GET per group-version besides.
 */
export function createCapabilitiesSource(
  client: KubeClient,
  options: { readonly ttlMs?: number; readonly now?: () => number } = {},
): () => Promise<ClusterCapabilities> {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? DEFAULT_CAPABILITIES_TTL_MS;
  let kept: { readonly answer: Promise<ClusterCapabilities>; readonly at: number } | undefined;
  return () => {
    if (kept !== undefined && now() - kept.at < ttlMs) return kept.answer;
    const entry = { answer: askCapabilities(client), at: now() };
    kept = entry;
    entry.answer.catch(() => {
      if (kept === entry) kept = undefined;
    });
    return entry.answer;
  };
}

async function askCapabilities(client: KubeClient): Promise<ClusterCapabilities> {
  // Not the reconcile's signal: the answer is shared, and one run's abort must not fail another's.
  const signal = AbortSignal.timeout(30_000);
  const get = (path: string, accept?: string) =>
    client.request({ method: 'GET', path, signal, ...(accept === undefined ? {} : { accept }) });
  const [version, core, groups] = await Promise.all([
    get('/version'),
    get('/api', AGGREGATED),
    get('/apis', AGGREGATED),
  ]);
  const kubeVersion = kubeVersionOf(version);
  if (isAggregated(core) && isAggregated(groups))
    return { kubeVersion, apiVersions: aggregatedApiVersions([core, groups]) };
  // A server without aggregated discovery: its group-versions, then each one's resource list.
  const groupVersions = legacyGroupVersions(core, groups);
  const lists = await Promise.all(
    groupVersions.map((gv) => get(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`)),
  );
  const apiVersions = groupVersions.flatMap((gv, index) => [
    gv,
    ...kindsOf(lists[index]).map((kind) => `${gv}/${kind}`),
  ]);
  return { kubeVersion, apiVersions: sortedUnique(apiVersions) };
}

/** @internal `/version`'s gitVersion without its `v`, else `major.minor.0`. */
export function kubeVersionOf(body: JsonValue | undefined): string {
  if (!isJsonObject(body)) throw new Error('the server answered /version without a version');
  const git = body['gitVersion'];
  if (typeof git === 'string' && /^v?\d+\.\d+\.\d+/.test(git)) return git.replace(/^v/, '');
  const number = (key: string) => String(body[key] ?? '').replace(/\D/g, '');
  const [major, minor] = [number('major'), number('minor')];
  if (major === '' || minor === '') throw new Error('the server answered /version without a version');
  return `${major}.${minor}.0`;
}

function isAggregated(body: JsonValue): boolean {
  return isJsonObject(body) && body['kind'] === 'APIGroupDiscoveryList';
}

/** @internal Every group/version and group/version/Kind of aggregated discovery answers (`/api`, `/apis`). */
export function aggregatedApiVersions(answers: readonly JsonValue[]): string[] {
  const found: string[] = [];
  for (const answer of answers) {
    for (const group of listOf(answer, 'items')) {
      const metadata = isJsonObject(group) ? group['metadata'] : undefined;
      const name = isJsonObject(metadata) && typeof metadata['name'] === 'string' ? metadata['name'] : '';
      for (const entry of listOf(group, 'versions')) {
        const version = isJsonObject(entry) ? entry['version'] : undefined;
        if (typeof version !== 'string') continue;
        const gv = name === '' ? version : `${name}/${version}`;
        found.push(gv);
        // helm lists a subresource's kind under its parent's group-version (`apps/v1/Scale`).
        for (const resource of listOf(entry, 'resources')) {
          for (const kind of [resource, ...listOf(resource, 'subresources')].map(responseKindOf)) {
            if (kind !== undefined) found.push(`${gv}/${kind}`);
          }
        }
      }
    }
  }
  return sortedUnique(found);
}

function responseKindOf(entry: JsonValue): string | undefined {
  const kind = isJsonObject(entry) ? entry['responseKind'] : undefined;
  const name = isJsonObject(kind) ? kind['kind'] : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The group-versions of `/api` (APIVersions) and `/apis` (APIGroupList). */
function legacyGroupVersions(core: JsonValue, groups: JsonValue): string[] {
  const versions = listOf(core, 'versions').filter((v): v is string => typeof v === 'string');
  const grouped = listOf(groups, 'groups').flatMap((group) =>
    listOf(group, 'versions').flatMap((entry) =>
      isJsonObject(entry) && typeof entry['groupVersion'] === 'string' ? [entry['groupVersion']] : [],
    ),
  );
  return [...versions, ...grouped];
}

/** The kinds of an APIResourceList, subresources' too, as helm lists them. */
function kindsOf(list: JsonValue | undefined): string[] {
  return listOf(list, 'resources').flatMap((entry) =>
    isJsonObject(entry) && typeof entry['kind'] === 'string' && entry['kind'] !== '' ? [entry['kind']] : [],
  );
}

function listOf(body: JsonValue | undefined, key: string): readonly JsonValue[] {
  const value = isJsonObject(body) ? body[key] : undefined;
  return Array.isArray(value) ? value : [];
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

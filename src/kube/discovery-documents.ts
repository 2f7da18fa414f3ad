import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { Scope } from '../manifests/scope-resolver.js';

export interface RestMapping {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly resource: string;
  readonly scope: Scope;
}

/**
 * The kinds of one group-version from its APIResourceList (`GET /api/v1`, `GET /apis/<g>/<v>`),
 * keyed by kind. Subresources (`deployments/scale`) share the kind of their parent and are skipped,
 * as kubectl's RESTMapper skips them.
 */
export function mappingsOfResourceList(
  body: JsonValue,
  group: string,
  version: string,
): ReadonlyMap<string, RestMapping> {
  const byKind = new Map<string, RestMapping>();
  const resources = isJsonObject(body) && Array.isArray(body['resources']) ? body['resources'] : [];
  for (const entry of resources) {
    if (!isJsonObject(entry)) continue;
    const { name, kind, namespaced } = entry;
    if (typeof name !== 'string' || typeof kind !== 'string' || name.includes('/')) continue;
    byKind.set(kind, {
      group,
      version,
      kind,
      resource: name,
      scope: namespaced === true ? 'Namespaced' : 'Cluster',
    });
  }
  return byKind;
}

/**
 * The versions an APIGroup (`GET /apis/<g>`) serves, in the order kubectl's RESTMapper tries them for
 * a group-kind without a version: the preferred version first, then the others in the server's order
 * (priority order). A kind need not be served at the preferred version: a CRD group whose kinds are
 * served at different versions has a preferred version that lacks some of them.
 */
export function versionsOfApiGroup(body: JsonValue): readonly string[] {
  if (!isJsonObject(body)) return [];
  const preferredEntry = body['preferredVersion'];
  const preferred = isJsonObject(preferredEntry) ? preferredEntry['version'] : undefined;
  const listed = Array.isArray(body['versions']) ? body['versions'] : [];
  const versions = listed.flatMap((entry) =>
    isJsonObject(entry) && typeof entry['version'] === 'string' ? [entry['version']] : [],
  );
  if (typeof preferred !== 'string') return versions;
  return [preferred, ...versions.filter((version) => version !== preferred)];
}

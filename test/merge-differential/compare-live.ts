import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { LAST_APPLIED_ANNOTATION } from '../../src/merge/last-applied-configuration.js';
import { stringifyJson } from '../../src/manifests/lossless-json.js';

// How the differential test compares the live objects of its two sides.

/**
 * The live object without what legitimately differs between two objects of the same name in two
 * namespaces, or between two writes of the same content:
 * - metadata.uid, resourceVersion, creationTimestamp, generation: identity and bookkeeping, not content
 *   (generation counts spec writes; kubectl and the engine may reach the same spec in different
 *   numbers of writes only if a verdict differs, which is checked separately);
 * - metadata.managedFields: holds timestamps; both sides use the manager `kubectl-client-side-apply`;
 * - metadata.namespace, and the namespace wherever it appears in the last-applied annotation and in
 *   a cluster-scoped object's name (compared byte for byte after substituting the namespace, so the
 *   annotation is otherwise held to be identical);
 * - Service spec.clusterIP/clusterIPs: allocated by the server, different for each Service.
 */
export function comparable(
  live: JsonObject | undefined,
  namespaceKubectl: string,
  namespaceEngine: string,
): JsonObject | undefined {
  if (live === undefined) return undefined;
  const copy = structuredClone(live);
  const metadata = isJsonObject(copy.metadata) ? copy.metadata : {};
  for (const key of [
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'generation',
    'managedFields',
    'namespace',
  ]) {
    delete metadata[key];
  }
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : undefined;
  const lastApplied = annotations?.[LAST_APPLIED_ANNOTATION];
  if (annotations !== undefined && typeof lastApplied === 'string') {
    annotations[LAST_APPLIED_ANNOTATION] = withoutNamespaces(lastApplied, namespaceKubectl, namespaceEngine);
  }
  if (typeof metadata.name === 'string') {
    metadata.name = withoutNamespaces(metadata.name, namespaceKubectl, namespaceEngine);
  }
  if (copy.kind === 'Service' && isJsonObject(copy.spec)) {
    delete copy.spec.clusterIP;
    delete copy.spec.clusterIPs;
  }
  return copy;
}

function withoutNamespaces(text: string, namespaceKubectl: string, namespaceEngine: string): string {
  return text.split(namespaceKubectl).join('<ns>').split(namespaceEngine).join('<ns>');
}

export function differingPaths(
  a: unknown,
  b: unknown,
  path = '',
): { path: string; a: unknown; b: unknown }[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [{ path: path || '/', a, b }];
    return a.flatMap((item, i) => differingPaths(item, b[i], `${path}/${i}`));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => differingPaths(a[k], b[k], `${path}/${k}`));
  }
  return stringifyJson(a) === stringifyJson(b) ? [] : [{ path: path || '/', a, b }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

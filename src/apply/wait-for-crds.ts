import { setTimeout as delay } from 'node:timers/promises';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { ResourceLocation } from '../kube/kube-object-api.js';
import type { RestMapper } from '../kube/rest-mapper.js';
import { CrdNotEstablishedError } from './crd-not-established-error.js';
import type { RunContext } from './run-context.js';

const POLL_MS = 200;

/**
 * Waits until every CRD the set just applied is Established and its served kinds show in discovery,
 * so the custom resources of the next wave can be mapped; past the deadline the run waits (not fails).
 */
export async function waitForCrds(
  crds: readonly ObjectRef[],
  context: Pick<RunContext, 'api' | 'mapper' | 'crdEstablishedTimeoutMs'>,
  signal: AbortSignal | undefined,
) {
  const deadline = Date.now() + (context.crdEstablishedTimeoutMs ?? 60_000);
  const location: ResourceLocation = {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespace: '',
  };
  for (const ref of crds) {
    for (;;) {
      const crd = await context.api.get(location, ref.name, signal);
      if (crd !== undefined && isEstablished(crd)) {
        // Discovery follows Established closely but not atomically: refresh until the kinds show.
        if (await servedKindsVisible(crd, context.mapper, signal)) break;
      }
      if (Date.now() > deadline) {
        throw new CrdNotEstablishedError(ref.name);
      }
      await delay(POLL_MS, undefined, signal === undefined ? {} : { signal });
    }
  }
}

function isEstablished(crd: JsonObject): boolean {
  const status = crd['status'];
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Established' && c['status'] === 'True')
  );
}

async function servedKindsVisible(
  crd: JsonObject,
  mapper: RestMapper,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const spec = crd['spec'];
  if (!isJsonObject(spec)) return true;
  const group = spec['group'];
  const names = spec['names'];
  const kind = isJsonObject(names) ? names['kind'] : undefined;
  const versions = Array.isArray(spec['versions']) ? spec['versions'] : [];
  if (typeof group !== 'string' || typeof kind !== 'string') return true;
  for (const entry of versions) {
    if (!isJsonObject(entry) || entry['served'] !== true || typeof entry['name'] !== 'string') continue;
    const gvk = { group, version: entry['name'], kind };
    if (mapper.cached(gvk) !== undefined) continue;
    await mapper.refresh(group, entry['name'], signal);
    if (mapper.cached(gvk) === undefined) return false;
  }
  return true;
}

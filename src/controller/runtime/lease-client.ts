import { KubeApiError } from '../../kube/kube-api-error.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';

interface LeaseClientOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** This replica: the holder it writes. */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly now: () => number;
}

/** The reads and writes of the leader Lease, one attempt each; the timing is the election's. */
export interface LeaseClient {
  /**
   * One attempt to take or keep the Lease; true when we hold it afterwards. client-go's
   * tryAcquireOrRenew: a Lease held by another is free when it has no holder or when its record has
   * not changed for its duration by *our* clock (we time when we last saw it change rather than
   * trusting the holder's renewTime, so clock skew cannot steal it); writes carry the resourceVersion,
   * so two candidates cannot both win (a 409 is a lost race, not an error).
   */
  tryAcquireOrRenew(signal: AbortSignal): Promise<boolean>;
  /**
   * client-go's ReleaseOnCancel: when we still hold the Lease, an empty holder and a 1 s duration, so
   * the next candidate takes over at its next attempt instead of waiting out the lease. False when
   * the Lease was not ours (any more).
   */
  release(): Promise<boolean>;
}

interface LeaseRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly resourceVersion: string;
}

export function createLeaseClient(options: LeaseClientOptions): LeaseClient {
  const { client, identity, now } = options;
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  const leasePath = `${collection}/${options.name}`;
  // The Lease's spec as last seen, and when (by our clock) it was first seen so.
  let observed: { key: string; at: number } | undefined;

  const read = async (signal: AbortSignal): Promise<JsonObject | undefined> => {
    try {
      const lease = await client.request({ method: 'GET', path: leasePath, signal });
      return isJsonObject(lease) ? lease : undefined;
    } catch (error) {
      if (error instanceof KubeApiError && error.notFound) return undefined;
      throw error;
    }
  };

  /** POST (no Lease yet) or PUT; false when another writer got there first. */
  const write = async (method: 'POST' | 'PUT', body: object, signal: AbortSignal): Promise<boolean> => {
    try {
      const path = method === 'POST' ? collection : leasePath;
      await client.request({ method, path, body: JSON.stringify(body), signal });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 409) return false;
      throw error;
    }
  };

  const body = (
    resourceVersion: string | undefined,
    holder: string,
    acquire: boolean,
    previous?: JsonObject,
  ) => leaseBody(options, now(), { resourceVersion, holder, acquire, previous });

  return {
    async tryAcquireOrRenew(signal) {
      const lease = await read(signal);
      if (lease === undefined) return write('POST', body(undefined, identity, true), signal);
      const record = recordOf(lease);
      const key = JSON.stringify(isJsonObject(lease['spec']) ? lease['spec'] : {});
      if (observed === undefined || observed.key !== key) observed = { key, at: now() };
      const holder = record?.holderIdentity ?? '';
      const mine = holder === identity;
      const expired = holder === '' || observed.at + (record?.leaseDurationSeconds ?? 0) * 1000 < now();
      if (!mine && !expired) return false;
      return write('PUT', body(record?.resourceVersion, identity, !mine, lease), signal);
    },

    async release() {
      const lease = await client.request({ method: 'GET', path: leasePath });
      if (!isJsonObject(lease)) return false;
      const record = recordOf(lease);
      if (record?.holderIdentity !== identity) return false;
      const released = body(record.resourceVersion, '', false, lease);
      await client.request({
        method: 'PUT',
        path: leasePath,
        body: JSON.stringify({ ...released, spec: { ...released.spec, leaseDurationSeconds: 1 } }),
      });
      return true;
    },
  };
}

/** The Lease written: the previous spec's other fields kept, acquireTime and transitions on a take-over. */
function leaseBody(
  options: LeaseClientOptions,
  nowMs: number,
  change: { resourceVersion: string | undefined; holder: string; acquire: boolean; previous?: JsonObject },
) {
  const { resourceVersion, holder, acquire, previous } = change;
  const stamp = microTime(nowMs);
  const previousSpec = previous !== undefined && isJsonObject(previous['spec']) ? previous['spec'] : {};
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    spec: {
      ...previousSpec,
      holderIdentity: holder,
      leaseDurationSeconds: Math.max(1, Math.round(options.leaseDurationMs / 1000)),
      renewTime: stamp,
      ...(acquire
        ? {
            acquireTime: stamp,
            leaseTransitions:
              (typeof previousSpec['leaseTransitions'] === 'number' ? previousSpec['leaseTransitions'] : 0) +
              (previous === undefined ? 0 : 1),
          }
        : {}),
    },
  };
}

function recordOf(lease: JsonObject): LeaseRecord | undefined {
  const spec = lease['spec'];
  const metadata = lease['metadata'];
  if (!isJsonObject(spec) || !isJsonObject(metadata)) return undefined;
  return {
    holderIdentity: typeof spec['holderIdentity'] === 'string' ? spec['holderIdentity'] : '',
    leaseDurationSeconds:
      typeof spec['leaseDurationSeconds'] === 'number' ? spec['leaseDurationSeconds'] : 15,
    resourceVersion: typeof metadata['resourceVersion'] === 'string' ? metadata['resourceVersion'] : '',
  };
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

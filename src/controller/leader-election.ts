import { setTimeout as delay } from 'node:timers/promises';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';

export interface LeaderElectionOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** This replica: the Pod name, or hostname and pid. */
  readonly identity: string;
  /** How long a Lease not renewed stays someone else's. Default 15 s (client-go's default). */
  readonly leaseDurationMs?: number;
  /** A leader that could not renew for this long steps down. Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Between two attempts to acquire or renew. Default 2 s. */
  readonly retryPeriodMs?: number;
  readonly now?: () => number;
  /** A clock that keeps running while the process is stopped (SIGSTOP, a frozen VM); default performance.now. */
  readonly monotonicNow?: () => number;
  readonly logger: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

export interface LeaderCallbacks {
  /** Called once, when this replica becomes the leader. */
  readonly onStartedLeading: () => void;
  /** Called when a leader could not renew within the deadline; the process should stop. */
  readonly onStoppedLeading: () => void;
}

/**
 * Thrown instead of sending a write once this replica cannot prove it still leads. Its name is
 * `AbortError`, so every layer treats it as the end of the work in flight, never as a per-object
 * failure to report or retry.
 */
export class LeadershipLostError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'LEADERSHIP_LOST';
  constructor() {
    super('this replica no longer holds the leader Lease: writes stop');
  }
}

export interface LeaderElection {
  /**
   * Throws LeadershipLostError unless this replica renewed the Lease less than the renew deadline
   * ago by a clock that runs on while the process is paused. The Lease is ours for leaseDuration
   * after the renewal was *sent* (the other candidates time it from when they saw it), and the renew
   * deadline is shorter, so a write this lets through cannot overlap a new leader's work. Every
   * write of the controller passes through it (KubeClient's writeFence).
   */
  assertLeading(): void;
  /** Aborted, with LeadershipLostError, as soon as this replica stops leading. */
  readonly lost: AbortSignal;
  /** Stops campaigning or renewing and, when leading, gives the Lease up so another replica takes over now. */
  release(): Promise<void>;
  readonly done: Promise<void>;
}

interface LeaseRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly resourceVersion: string;
}

/**
 * Leader election with a coordination.k8s.io/v1 Lease, client-go's algorithm: a Lease is free when it
 * has no holder or when its record has not changed for leaseDuration by *our* clock (we time when we
 * last saw it change rather than trusting the holder's renewTime, so clock skew cannot steal it);
 * updates carry the resourceVersion, so two candidates cannot both win.
 */
export function startLeaderElection(
  options: LeaderElectionOptions,
  callbacks: LeaderCallbacks,
): LeaderElection {
  const leaseDurationMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = options.retryPeriodMs ?? 2_000;
  const now = options.now ?? Date.now;
  const monotonic = options.monotonicNow ?? (() => performance.now());
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  const leasePath = `${path}/${options.name}`;
  const stop = new AbortController();
  const signal = stop.signal;
  let leader = false;
  // When the last successful acquire or renew was sent, by the monotonic clock.
  let renewedAt = Number.NEGATIVE_INFINITY;
  const lostLeadership = new AbortController();
  const stepDown = () => {
    leader = false;
    if (!lostLeadership.signal.aborted) lostLeadership.abort(new LeadershipLostError());
  };
  let observed: { record: LeaseRecord | undefined; key: string; at: number } | undefined;

  const read = async (): Promise<JsonObject | undefined> => {
    try {
      const lease = await options.client.request({ method: 'GET', path: leasePath, signal });
      return isJsonObject(lease) ? lease : undefined;
    } catch (error) {
      if (error instanceof KubeApiError && error.notFound) return undefined;
      throw error;
    }
  };

  const leaseBody = (
    resourceVersion: string | undefined,
    holder: string,
    acquire: boolean,
    previous?: JsonObject,
  ) => {
    const stamp = microTime(now());
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
        leaseDurationSeconds: Math.max(1, Math.round(leaseDurationMs / 1000)),
        renewTime: stamp,
        ...(acquire
          ? {
              acquireTime: stamp,
              leaseTransitions:
                (typeof previousSpec['leaseTransitions'] === 'number'
                  ? previousSpec['leaseTransitions']
                  : 0) + (previous === undefined ? 0 : 1),
            }
          : {}),
      },
    };
  };

  /** One attempt to take or keep the Lease; true when we hold it afterwards. */
  const tryAcquireOrRenew = async (): Promise<boolean> => {
    const lease = await read();
    if (lease === undefined) {
      try {
        await options.client.request({
          method: 'POST',
          path,
          body: JSON.stringify(leaseBody(undefined, options.identity, true)),
          signal,
        });
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.status === 409) return false;
        throw error;
      }
    }
    const record = recordOf(lease);
    const key = JSON.stringify(isJsonObject(lease['spec']) ? lease['spec'] : {});
    if (observed === undefined || observed.key !== key) observed = { record, key, at: now() };
    const holder = record?.holderIdentity ?? '';
    const mine = holder === options.identity;
    const expired = holder === '' || observed.at + (record?.leaseDurationSeconds ?? 0) * 1000 < now();
    if (!mine && !expired) return false;
    try {
      await options.client.request({
        method: 'PUT',
        path: leasePath,
        body: JSON.stringify(leaseBody(record?.resourceVersion, options.identity, !mine, lease)),
        signal,
      });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 409) return false;
      throw error;
    }
  };

  const campaign = async () => {
    while (!signal.aborted) {
      try {
        const attempt = monotonic();
        if (await tryAcquireOrRenew()) {
          renewedAt = attempt;
          break;
        }
      } catch (error) {
        if (signal.aborted) return;
        options.logger.warn(
          { err: error, lease: options.name },
          'leader election: cannot read or take the Lease',
        );
      }
      await delay(retryPeriodMs, undefined, { signal }).catch(() => undefined);
    }
    if (signal.aborted) return;
    leader = true;
    options.logger.info(
      { identity: options.identity, lease: `${options.namespace}/${options.name}` },
      'became the leader',
    );
    callbacks.onStartedLeading();
    let lastRenew = now();
    while (!signal.aborted) {
      await delay(retryPeriodMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      try {
        const attempt = monotonic();
        if (await tryAcquireOrRenew()) {
          lastRenew = now();
          renewedAt = attempt;
          continue;
        }
      } catch (error) {
        if (signal.aborted) return;
        options.logger.warn({ err: error }, 'leader election: renewing the Lease failed');
      }
      if (now() - lastRenew > renewDeadlineMs || monotonic() - renewedAt > renewDeadlineMs) {
        loseLeadership();
        return;
      }
    }
  };

  /** Once: stop renewing, abort `lost`, tell the caller (which stops the process). */
  const loseLeadership = () => {
    if (!leader) return;
    stepDown();
    stop.abort();
    options.logger.warn(
      { identity: options.identity },
      'lost the leadership: the Lease was not renewed in time',
    );
    callbacks.onStoppedLeading();
  };

  const done = campaign();

  return {
    assertLeading() {
      if (leader && monotonic() - renewedAt < renewDeadlineMs) return;
      loseLeadership();
      throw new LeadershipLostError();
    },
    lost: lostLeadership.signal,
    async release() {
      stop.abort();
      await done;
      if (!leader) return;
      stepDown();
      try {
        const lease = await options.client.request({ method: 'GET', path: leasePath });
        if (!isJsonObject(lease)) return;
        const record = recordOf(lease);
        if (record?.holderIdentity !== options.identity) return;
        const body = leaseBody(record.resourceVersion, '', false, lease);
        // client-go's ReleaseOnCancel: an empty holder and a 1 s duration, so the next candidate takes
        // over at its next attempt instead of waiting out the lease.
        await options.client.request({
          method: 'PUT',
          path: leasePath,
          body: JSON.stringify({ ...body, spec: { ...body.spec, leaseDurationSeconds: 1 } }),
        });
        options.logger.info({ identity: options.identity }, 'released the Lease');
      } catch (error) {
        options.logger.warn({ err: error }, 'releasing the Lease failed; it will expire');
      }
    },
    done,
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
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

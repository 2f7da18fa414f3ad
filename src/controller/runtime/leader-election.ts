import { setTimeout as delay } from 'node:timers/promises';
import type { KubeClient } from '../../kube/kube-client.js';
import { createLeaseClient, type LeaseClient } from './lease-client.js';

interface LeaderElectionOptions {
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

interface LeaderCallbacks {
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

/**
 * Leader election with a coordination.k8s.io/v1 Lease, client-go's algorithm (the Lease's reads and
 * writes are in lease-client.ts): campaign every retryPeriod until the Lease is ours, then renew it
 * every retryPeriod and step down when no renewal succeeded within the renew deadline.
 */
export function startLeaderElection(
  options: LeaderElectionOptions,
  callbacks: LeaderCallbacks,
): LeaderElection {
  const { identity, logger } = options;
  const now = options.now ?? Date.now;
  const stop = new AbortController();
  const loop: RenewLoop = {
    lease: createLeaseClient({
      ...options,
      leaseDurationMs: options.leaseDurationMs ?? 15_000,
      now,
    }),
    signal: stop.signal,
    retryPeriodMs: options.retryPeriodMs ?? 2_000,
    renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
    now,
    monotonic: options.monotonicNow ?? (() => performance.now()),
    logger,
    leaseName: options.name,
  };
  let leader = false;
  // When the last successful acquire or renew was sent, by the monotonic clock.
  let renewedAt = Number.NEGATIVE_INFINITY;
  const lostLeadership = new AbortController();
  const stepDown = () => {
    leader = false;
    if (!lostLeadership.signal.aborted) lostLeadership.abort(new LeadershipLostError());
  };

  /** Once: stop renewing, abort `lost`, tell the caller (which stops the process). */
  const loseLeadership = () => {
    if (!leader) return;
    stepDown();
    stop.abort();
    logger.warn({ identity }, 'lost the leadership: the Lease was not renewed in time');
    callbacks.onStoppedLeading();
  };

  const campaign = async () => {
    const acquiredAt = await acquireLease(loop);
    if (acquiredAt === undefined || loop.signal.aborted) return;
    renewedAt = acquiredAt;
    leader = true;
    logger.info({ identity, lease: `${options.namespace}/${options.name}` }, 'became the leader');
    callbacks.onStartedLeading();
    const expired = await renewUntilDeadline(loop, renewedAt, (attempt) => {
      renewedAt = attempt;
    });
    if (expired) loseLeadership();
  };

  const done = campaign();

  return {
    assertLeading() {
      if (leader && loop.monotonic() - renewedAt < loop.renewDeadlineMs) return;
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
        if (await loop.lease.release()) logger.info({ identity }, 'released the Lease');
      } catch (error) {
        logger.warn({ err: error }, 'releasing the Lease failed; it will expire');
      }
    },
    done,
  };
}

/** What the campaign and renew loops share. */
interface RenewLoop {
  readonly lease: LeaseClient;
  /** Aborted when the election stops (released, or leadership lost). */
  readonly signal: AbortSignal;
  readonly retryPeriodMs: number;
  readonly renewDeadlineMs: number;
  readonly now: () => number;
  /** Keeps running while the process is paused, so a pause counts against the deadline. */
  readonly monotonic: () => number;
  readonly logger: LeaderElectionOptions['logger'];
  readonly leaseName: string;
}

function waitRetryPeriod(loop: RenewLoop): Promise<unknown> {
  return delay(loop.retryPeriodMs, undefined, { signal: loop.signal }).catch(() => undefined);
}

/**
 * Tries every retry period until the Lease is ours: the monotonic time the winning attempt was sent,
 * or undefined once the election is stopped.
 */
async function acquireLease(loop: RenewLoop): Promise<number | undefined> {
  while (!loop.signal.aborted) {
    try {
      const attempt = loop.monotonic();
      if (await loop.lease.tryAcquireOrRenew(loop.signal)) return attempt;
    } catch (error) {
      if (loop.signal.aborted) return undefined;
      loop.logger.warn(
        { err: error, lease: loop.leaseName },
        'leader election: cannot read or take the Lease',
      );
    }
    await waitRetryPeriod(loop);
  }
  return undefined;
}

/**
 * Renews every retry period until the election is stopped (false), or until the renew deadline
 * passed without a renewal, by either clock (true).
 */
async function renewUntilDeadline(
  loop: RenewLoop,
  acquiredAt: number,
  onRenewed: (sentAt: number) => void,
): Promise<boolean> {
  const { signal, now, monotonic, renewDeadlineMs } = loop;
  let lastRenew = now();
  let renewedAt = acquiredAt;
  while (!signal.aborted) {
    await waitRetryPeriod(loop);
    if (signal.aborted) return false;
    try {
      const attempt = monotonic();
      if (await loop.lease.tryAcquireOrRenew(signal)) {
        lastRenew = now();
        renewedAt = attempt;
        onRenewed(attempt);
        continue;
      }
    } catch (error) {
      if (signal.aborted) return false;
      loop.logger.warn({ err: error }, 'leader election: renewing the Lease failed');
    }
    if (now() - lastRenew > renewDeadlineMs || monotonic() - renewedAt > renewDeadlineMs) return true;
  }
  return false;
}

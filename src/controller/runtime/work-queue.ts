import { createWorkerPool, type QueueWorker } from './worker-pool.js';
import { createKeyTimers, systemQueueClock, type KeyTimerSlot, type QueueClock } from './key-timers.js';
import type { Requeue } from '../../api/requeue.js';
import { backoffDelayMs, DEFAULT_BASE_BACKOFF_MS, jitteredIntervalMs } from '../../api/requeue.js';

interface WorkQueueOptions {
  /** How many keys are processed at once, in total (a run away from its worker does not count). */
  readonly concurrency: number;
  readonly process: (key: string, worker: QueueWorker) => Promise<Requeue>;
  readonly clock?: QueueClock;
  /** A number in [0, 1); Math.random by default. */
  readonly random?: () => number;
  readonly baseBackoffMs?: number;
  /** The cap for a `process` that throws instead of returning a Requeue. */
  readonly maxBackoffMs?: number;
  /** Told about a `process` that threw (the queue then backs off). */
  readonly onError?: (key: string, error: unknown) => void;
}

export interface WorkQueue {
  /** Process `key` as soon as a worker is free; coalesces with a pending run of the same key. */
  add(key: string): void;
  /** Drop a scheduled run of `key` and its failure count (the object is gone). */
  forget(key: string): void;
  /** Begin processing (the controller calls it once it leads). Keys added before wait until then. */
  start(): void;
  /** Stop taking work; resolves once every run in progress has ended. */
  shutdown(): Promise<void>;
  /** Keys due now and waiting for a worker, plus keys being processed. */
  depth(): number;
  /** Keys with a run scheduled for later (interval or backoff). */
  scheduled(): number;
}

interface KeyState extends KeyTimerSlot {
  queued: boolean;
  running: boolean;
  /** An add() arrived while running: run again right after. */
  dirty: boolean;
  failures: number;
}

/**
 * The controller's work queue, with client-go's guarantees: one key is never processed twice at once
 * (an add while it runs marks it dirty and it runs once more afterwards), adds for a key that is already
 * waiting coalesce into one run, total concurrency is bounded (p-queue), and every run schedules the
 * next: after the interval on success, with exponential backoff on failure.
 */
export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const random = options.random ?? Math.random;
  const baseBackoffMs = options.baseBackoffMs ?? DEFAULT_BASE_BACKOFF_MS;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const states = new Map<string, KeyState>();
  const inFlight = new Set<Promise<Requeue>>();
  const pool = createWorkerPool(options.concurrency, (key) => run(key));
  let stopped = false;

  const enqueue = (key: string, state: KeyState) => {
    timers.clear(state);
    if (state.queued || stopped) return;
    state.queued = true;
    pool.push(key);
  };
  const timers = createKeyTimers<KeyState>(options.clock ?? systemQueueClock, enqueue);

  const run = async (key: string): Promise<void> => {
    const state = stateOf(states, key);
    state.queued = false;
    if (stopped) return;
    state.running = true;
    const work: Promise<Requeue> = options.process(key, pool.worker).catch((error: unknown) => {
      options.onError?.(key, error);
      return { kind: 'backoff', maxDelayMs: maxBackoffMs };
    });
    inFlight.add(work);
    let next: Requeue;
    try {
      next = await work;
    } finally {
      inFlight.delete(work);
      state.running = false;
    }
    if (stopped) return;
    state.failures = next.kind === 'backoff' ? state.failures + 1 : 0;
    if (state.dirty) {
      state.dirty = false;
      enqueue(key, state);
      return;
    }
    const delayMs = nextRunDelayMs(next, state.failures, baseBackoffMs, random);
    if (delayMs !== undefined) timers.schedule(key, state, delayMs);
    else if (!state.queued && state.timer === undefined) states.delete(key);
  };

  return {
    add(key) {
      if (stopped) return;
      const state = stateOf(states, key);
      if (state.running) state.dirty = true;
      else enqueue(key, state);
    },
    forget(key) {
      const state = states.get(key);
      if (state === undefined) return;
      timers.clear(state);
      state.failures = 0;
      state.dirty = false;
      if (!state.queued && !state.running) states.delete(key);
    },
    start() {
      if (!stopped) pool.start();
    },
    async shutdown() {
      stopped = true;
      for (const key of pool.stop()) stateOf(states, key).queued = false;
      for (const state of states.values()) timers.clear(state);
      await Promise.all([...inFlight]);
    },
    depth: () => pool.depth(),
    scheduled: () => [...states.values()].filter((state) => state.timer !== undefined).length,
  };
}

function stateOf(states: Map<string, KeyState>, key: string): KeyState {
  let state = states.get(key);
  if (state === undefined) {
    state = { queued: false, running: false, dirty: false, failures: 0 };
    states.set(key, state);
  }
  return state;
}

/** When the run a finished run asks for is due: after the jittered interval, or the backoff; or never. */
function nextRunDelayMs(
  next: Requeue,
  failures: number,
  baseBackoffMs: number,
  random: () => number,
): number | undefined {
  switch (next.kind) {
    case 'interval':
      return jitteredIntervalMs(next.intervalMs, random());
    case 'backoff':
      return backoffDelayMs(failures, baseBackoffMs, next.maxDelayMs, random());
    case 'none':
      return undefined;
  }
}

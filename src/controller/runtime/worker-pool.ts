/**
 * The worker a run of `process` holds. A run that must wait for something slow that is not its own
 * work (a build slot, shared with other tenants) hands its worker back meanwhile with `away`, so keys
 * that need no build are never queued behind those that wait for one.
 */
export interface QueueWorker {
  /** Runs `wait` without holding a worker; takes one again (before keys not yet started) after it. */
  away<T>(wait: () => Promise<T>): Promise<T>;
}

/**
 * The work queue's workers: at most `concurrency` keys processed at once, in the order they came. A run
 * that waits for something shared with other tenants (a build slot) steps out with `worker.away` and
 * comes back ahead of keys not yet started, so it is not starved by them, and they never wait for it.
 */
export interface WorkerPool {
  readonly worker: QueueWorker;
  /** Process `key` when a worker is free. */
  push(key: string): void;
  /** Begin taking keys (the controller leads). */
  start(): void;
  /** Take no more keys; returns those that were waiting. Runs away keep going without a worker. */
  stop(): string[];
  /** Keys waiting for a worker, plus runs holding one. */
  depth(): number;
}

export function createWorkerPool(concurrency: number, run: (key: string) => Promise<void>): WorkerPool {
  let due: string[] = [];
  /** Runs coming back from `away`, served first. */
  const returning: (() => void)[] = [];
  let busy = 0;
  let started = false;
  let stopped = false;

  const pump = () => {
    while (busy < concurrency) {
      const resume = returning.shift();
      if (resume !== undefined) {
        busy += 1;
        resume();
        continue;
      }
      const key = started && !stopped ? due.shift() : undefined;
      if (key === undefined) return;
      busy += 1;
      void run(key).finally(() => {
        busy -= 1;
        pump();
      });
    }
  };
  const worker: QueueWorker = {
    async away(wait) {
      busy -= 1;
      pump();
      try {
        return await wait();
      } finally {
        if (stopped) busy += 1;
        else
          await new Promise<void>((resume) => {
            returning.push(resume);
            pump();
          });
      }
    },
  };
  return {
    worker,
    push(key) {
      due.push(key);
      pump();
    },
    start() {
      started = true;
      pump();
    },
    stop() {
      stopped = true;
      const dropped = due;
      due = [];
      return dropped;
    },
    depth: () => due.length + busy,
  };
}

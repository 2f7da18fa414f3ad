type TimerHandle = unknown;

/** The clock and timers, injected so the queue's scheduling can be tested without waiting. */
export interface QueueClock {
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export const systemQueueClock: QueueClock = {
  now: () => Date.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A key's later run, if one is scheduled. */
export interface KeyTimerSlot {
  timer?: { readonly handle: TimerHandle; readonly dueAt: number };
}

/** One timer per key for its next run, on the queue's injected clock. */
interface KeyTimers<S extends KeyTimerSlot> {
  /**
   * Calls `onDue(key, slot)` after `delayMs`, unless a run due no later is already scheduled: that
   * earlier run will schedule the next one itself.
   */
  schedule(key: string, slot: S, delayMs: number): void;
  /** Cancels the scheduled run, if any. */
  clear(slot: S): void;
}

export function createKeyTimers<S extends KeyTimerSlot>(
  clock: QueueClock,
  onDue: (key: string, slot: S) => void,
): KeyTimers<S> {
  const clear = (slot: S) => {
    if (slot.timer !== undefined) clock.clearTimer(slot.timer.handle);
    slot.timer = undefined;
  };
  return {
    clear,
    schedule(key, slot, delayMs) {
      const dueAt = clock.now() + delayMs;
      if (slot.timer !== undefined && slot.timer.dueAt <= dueAt) return;
      clear(slot);
      const handle = clock.setTimer(() => {
        // A timer cleared or replaced after it fired but before this ran is stale.
        if (slot.timer?.handle !== handle) return;
        slot.timer = undefined;
        onDue(key, slot);
      }, delayMs);
      slot.timer = { handle, dueAt };
    },
  };
}

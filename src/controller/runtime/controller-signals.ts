import { setMaxListeners } from 'node:events';

/** The signals of the controller's life: stop taking work, abort in-flight work, leadership lost. */
export interface ControllerSignals {
  readonly stopping: AbortController;
  readonly hardStop: AbortController;
  readonly lostLeadership: AbortController;
  /** What each reconcile's requests listen to: the end of the grace period, or the lost leadership. */
  readonly reconcile: AbortSignal;
}

export function controllerSignals(): ControllerSignals {
  const stopping = new AbortController();
  const hardStop = new AbortController();
  // Every reconcile's deadline signal listens to these two; there may be many at once.
  setMaxListeners(0, stopping.signal, hardStop.signal);
  // In-flight requests end the moment the leadership is lost, not after the shutdown grace period.
  const lostLeadership = new AbortController();
  const reconcile = AbortSignal.any([hardStop.signal, lostLeadership.signal]);
  setMaxListeners(0, reconcile);
  return { stopping, hardStop, lostLeadership, reconcile };
}

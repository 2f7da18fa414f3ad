// Waiting on the controller's own log for reconciles of one ApplySet: the suites that count requests at
// rest must know a number of reconciles is over before they read a counter again.

import { logCount, waitFor, type ControllerProcess } from './e2e-kit.js';

/**
 * Waits until the controller has logged `reconciled` for `key` (namespace/name) at least `atLeast`
 * times, or fails with `what` after `timeoutMs`.
 */
export async function waitForReconciles(
  controller: ControllerProcess,
  key: string,
  atLeast: number,
  what: string,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    what,
    async () => (logCount(controller, key, 'reconciled') >= atLeast ? true : undefined),
    timeoutMs,
  );
}

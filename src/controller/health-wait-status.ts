/**
 * Shows spec.wait's health wait in the ApplySet's status while it lasts: Ready Unknown, reason
 * Progressing, naming the objects not ready yet (progressingStatus). Without it the status would keep
 * the previous run's Ready until the wait ends, minutes later with a long spec.timeout. Written when
 * the wait starts, and again only when the set of objects waited for changes and REWRITE_AFTER_MS
 * passed since the last write: never on every poll.
 */

import type { HealthWait } from '../apply/apply-set-contract.js';
import type { ApplySet, ApplySetStatus } from '../api/applyset-types.js';
import { pendingNames, progressingStatus } from '../api/progressing-status.js';
import type { Logger } from '../observability/create-logger.js';
import type { ApplySetApi } from './applyset-api.js';
import type { ReconcilerDeps } from './reconcile-applyset.js';

/** The least time between two writes of the wait's status. */
export const REWRITE_AFTER_MS = 15_000;

/** The status the wait wrote last, and the ApplySet's resourceVersion after that write. */
export interface WrittenStatus {
  readonly status: ApplySetStatus;
  readonly resourceVersion: string | undefined;
}

export interface HealthWaitStatus {
  /** The engine's `onHealthWait`. Never throws: a failed write is logged and the wait goes on. */
  readonly onHealthWait: (wait: HealthWait) => Promise<void>;
  /** What the wait wrote last, if anything: the run's final status write is conditional on its version. */
  readonly written: () => WrittenStatus | undefined;
}

export function createHealthWaitStatus(
  deps: Pick<ReconcilerDeps, 'metrics' | 'now' | 'signal'>,
  api: ApplySetApi,
  applySet: ApplySet,
  revision: string,
  log: Logger,
): HealthWaitStatus {
  let written: WrittenStatus | undefined;
  let writtenAt = 0;
  let writtenNames: string | undefined;
  // After a conflict the run's view is stale (the spec changed, or another replica wrote): its final
  // write will conflict too and the ApplySet is read again, so the wait writes nothing more.
  let stale = false;

  const onHealthWait = async (wait: HealthWait): Promise<void> => {
    const names = pendingNames(wait.pending);
    const now = deps.now();
    const due = written === undefined || (names !== writtenNames && now - writtenAt >= REWRITE_AFTER_MS);
    if (stale || !due || deps.signal.aborted) return;
    const status = progressingStatus({
      previous: applySet.status,
      generation: applySet.metadata.generation,
      namespace: applySet.metadata.namespace,
      revision,
      pending: wait.pending,
      now: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    try {
      const version = written?.resourceVersion ?? wait.parentResourceVersion;
      const result = await api.writeStatus(applySet, status, version, deps.signal);
      if (result.kind !== 'written') {
        stale = true;
        return;
      }
      written = { status, resourceVersion: result.resourceVersion };
      writtenAt = now;
      writtenNames = names;
      deps.metrics.setReady(applySet.metadata.namespace, applySet.metadata.name, -1);
    } catch (error) {
      // The status is a courtesy while waiting; the run's own outcome is written at its end regardless.
      log.warn({ err: error }, 'could not write the Progressing status');
    }
  };
  return { onHealthWait, written: () => written };
}

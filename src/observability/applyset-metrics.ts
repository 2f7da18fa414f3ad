/**
 * The Prometheus series labelled by ApplySet (namespace and name): Ready, the revision last applied,
 * reconcile durations and objects by verb, drift and fights. Each ApplySet adds its own series, so
 * they are all removed when it is deleted: a fleet's series follow its ApplySets, never accumulate.
 */

import { Counter, Gauge, type Registry } from 'prom-client';
import { sharedString } from '../kube/shared-strings.js';

const RECONCILE_RESULTS = [
  'success',
  'stalled',
  'retryable',
  'waiting',
  'suspended',
  'deleted',
  'error',
] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

const OBJECT_ACTIONS = ['created', 'configured', 'unchanged', 'pruned', 'conflict', 'failed'] as const;
export type ObjectAction = (typeof OBJECT_ACTIONS)[number];

export interface ApplySetMetrics {
  /** Ready of one ApplySet: 1 True, 0 False, -1 Unknown; `undefined` forgets all its series (deleted). */
  setReady(namespace: string, name: string, ready: 1 | 0 | -1 | undefined): void;
  /** The revision last applied in full: `applyset_info{revision}` 1, the previous revision's series gone. */
  setRevision(namespace: string, name: string, revision: string | undefined): void;
  observeApplySetReconcile(namespace: string, name: string, result: ReconcileResult, seconds: number): void;
  countApplySetObjects(namespace: string, name: string, verb: ObjectAction, count: number): void;
  /** Objects of one ApplySet found drifted and left alone (driftMode Warn), on one run. */
  countDrift(namespace: string, name: string, objects: number): void;
  /** Objects of one ApplySet that began a fight (corrected on three runs in a row). */
  countFights(namespace: string, name: string, objects: number): void;
}

export function createApplySetMetrics(registry: Registry): ApplySetMetrics {
  const series = createSeries(registry);
  // The revision each ApplySet's info series carries, so a new one replaces it rather than adding one.
  const revisions = new Map<string, string>();
  const forget = (namespace: string, name: string) => {
    series.ready.remove({ namespace, name });
    series.drift.remove({ namespace, name });
    series.fights.remove({ namespace, name });
    const revision = revisions.get(`${namespace}/${name}`);
    if (revision !== undefined) series.info.remove({ namespace, name, revision });
    revisions.delete(`${namespace}/${name}`);
    for (const result of RECONCILE_RESULTS) {
      series.reconciles.remove({ namespace, name, result });
      series.reconcileSeconds.remove({ namespace, name, result });
    }
    for (const verb of OBJECT_ACTIONS) series.objects.remove({ namespace, name, verb });
  };
  return {
    setReady(namespace, name, value) {
      if (value === undefined) forget(namespace, name);
      else series.ready.set({ namespace, name }, value);
    },
    setRevision(namespace, name, revision) {
      const key = `${namespace}/${name}`;
      const before = revisions.get(key);
      if (before === revision) return;
      if (before !== undefined) series.info.remove({ namespace, name, revision: before });
      if (revision === undefined) revisions.delete(key);
      else {
        // One instance of a revision for the fleet at it, not one per ApplySet (here and in the series).
        const shared = sharedString(revision);
        revisions.set(key, shared);
        series.info.set({ namespace, name, revision: shared }, 1);
      }
    },
    observeApplySetReconcile(namespace, name, result, seconds) {
      series.reconciles.inc({ namespace, name, result });
      series.reconcileSeconds.inc({ namespace, name, result }, seconds);
    },
    countApplySetObjects(namespace, name, verb, count) {
      if (count > 0) series.objects.inc({ namespace, name, verb }, count);
    },
    countDrift(namespace, name, objects) {
      if (objects > 0) series.drift.inc({ namespace, name }, objects);
    },
    countFights(namespace, name, objects) {
      if (objects > 0) series.fights.inc({ namespace, name }, objects);
    },
  };
}

function createSeries(registry: Registry) {
  const registers = [registry];
  return {
    ready: new Gauge({
      name: 'applyset_ready',
      help: 'Ready of each ApplySet: 1 True, 0 False, -1 Unknown.',
      labelNames: ['namespace', 'name'] as const,
      registers,
    }),
    info: new Gauge({
      name: 'applyset_info',
      help: 'The revision each ApplySet last applied in full (status.lastAppliedRevision), always 1.',
      labelNames: ['namespace', 'name', 'revision'] as const,
      registers,
    }),
    // A summary's two series, without buckets: a histogram's 8 buckets multiplied by every ApplySet made
    // a fleet's scrape nearly 3 times as large and cost 1.5 KiB more per ApplySet (docs/performance.md),
    // and a quantile of one ApplySet's few reconciles in a rate window says little. The fleet's own
    // histogram (applyset_reconcile_duration_seconds) keeps the buckets.
    reconciles: new Counter({
      name: 'applyset_set_reconcile_duration_seconds_count',
      help: 'Reconciles of each ApplySet, by result (with _sum: their mean duration).',
      labelNames: ['namespace', 'name', 'result'] as const,
      registers,
    }),
    reconcileSeconds: new Counter({
      name: 'applyset_set_reconcile_duration_seconds_sum',
      help: 'Seconds the reconciles of each ApplySet took in all, by result.',
      labelNames: ['namespace', 'name', 'result'] as const,
      registers,
    }),
    objects: new Counter({
      name: 'applyset_set_objects_total',
      help: 'Children of one ApplySet, by what its reconciles did to them (created, configured, unchanged, pruned, conflict, failed).',
      labelNames: ['namespace', 'name', 'verb'] as const,
      registers,
    }),
    drift: new Counter({
      name: 'applyset_drift_total',
      help: 'Objects found changed on the cluster and not corrected (driftMode Warn), summed over runs, by ApplySet.',
      labelNames: ['namespace', 'name'] as const,
      registers,
    }),
    fights: new Counter({
      name: 'applyset_fights_total',
      help: 'Fights detected: an object corrected on three runs in a row because someone keeps changing it back, by ApplySet.',
      labelNames: ['namespace', 'name'] as const,
      registers,
    }),
  };
}

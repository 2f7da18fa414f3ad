/**
 * The Prometheus series labelled by ApplySet (namespace and name): Ready, the revision last applied,
 * reconcile durations and objects by verb, drift and fights. Each ApplySet adds its own series, so
 * they are all removed when it is deleted: a fleet's series follow its ApplySets, never accumulate.
 * They are kept one small record per ApplySet (SetSeries) and exposed through the registry as prom-client's
 * own series would be.
 */

import type { Metric, Registry } from 'prom-client';
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
  const sets = new Map<string, SetSeries>();
  for (const family of FAMILIES) registry.registerMetric(familyMetric(family, sets));
  const of = (namespace: string, name: string): SetSeries => {
    const key = `${namespace}/${name}`;
    let kept = sets.get(key);
    if (kept === undefined) {
      kept = { namespace: sharedString(namespace), name };
      sets.set(key, kept);
    }
    return kept;
  };
  return {
    setReady(namespace, name, value) {
      if (value === undefined) sets.delete(`${namespace}/${name}`);
      else of(namespace, name).ready = value;
    },
    setRevision(namespace, name, revision) {
      if (revision === undefined) {
        const kept = sets.get(`${namespace}/${name}`);
        if (kept !== undefined) kept.revision = undefined;
      } else {
        // One instance of a revision for the fleet at it, not one per ApplySet.
        of(namespace, name).revision = sharedString(revision);
      }
    },
    observeApplySetReconcile(namespace, name, result, seconds) {
      const kept = of(namespace, name);
      const at = 2 * RECONCILE_RESULTS.indexOf(result);
      const counts = grownTo(kept.reconciles, at + 2);
      counts[at] = (counts[at] ?? 0) + 1;
      counts[at + 1] = (counts[at + 1] ?? 0) + seconds;
      kept.reconciles = counts;
    },
    countApplySetObjects(namespace, name, verb, count) {
      if (count <= 0) return;
      const kept = of(namespace, name);
      const at = OBJECT_ACTIONS.indexOf(verb);
      const counts = grownTo(kept.objects, at + 1);
      counts[at] = (counts[at] ?? 0) + count;
      kept.objects = counts;
    },
    countDrift(namespace, name, objects) {
      if (objects > 0) {
        const kept = of(namespace, name);
        kept.drift = (kept.drift ?? 0) + objects;
      }
    },
    countFights(namespace, name, objects) {
      if (objects > 0) {
        const kept = of(namespace, name);
        kept.fights = (kept.fights ?? 0) + objects;
      }
    },
  };
}

/**
 * `counts` as long as `length` at least, grown with zeros to exactly that (an array grown by push
 * reserves room for 16 more): a set that only ever succeeds keeps two numbers, not a pair per result.
 */
function grownTo(counts: number[] | undefined, length: number): number[] {
  if (counts !== undefined && counts.length >= length) return counts;
  return Array.from({ length }, (_, index) => counts?.[index] ?? 0);
}

/**
 * What the series of one ApplySet hold, in one small object: prom-client keeps each series as an entry
 * of its own (a key string, a labels object and a value object), about 1.1 KiB for the six series
 * an ApplySet has at rest, 11 MiB of heap at 10,000 ApplySets (docs/performance.md). A family's series
 * are made from these only when /metrics is read.
 */
interface SetSeries {
  readonly namespace: string;
  readonly name: string;
  ready?: number;
  revision?: string | undefined;
  /** By RECONCILE_RESULTS' index i: the count at 2i, the seconds at 2i + 1 (as long as the last used). */
  reconciles?: number[];
  /** By OBJECT_ACTIONS' index (as long as the last used). */
  objects?: number[];
  drift?: number;
  fights?: number;
}

interface SeriesValue {
  readonly value: number;
  readonly labels: Record<string, string>;
}

/** One exposed family: its name, help and type, and its series of one ApplySet. */
interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly values: (set: SetSeries) => SeriesValue[];
}

const setLabels = (set: SetSeries) => ({ namespace: set.namespace, name: set.name });

/** The count (`at` 0) or the seconds (`at` 1) of each result the set was reconciled with. */
function byResult(set: SetSeries, at: 0 | 1): SeriesValue[] {
  const counts = set.reconciles ?? [];
  const values: SeriesValue[] = [];
  for (const [index, result] of RECONCILE_RESULTS.entries()) {
    if ((counts[2 * index] ?? 0) === 0) continue;
    const labels = { namespace: set.namespace, name: set.name, result };
    values.push({ value: counts[2 * index + at] ?? 0, labels });
  }
  return values;
}

/** The objects counted for each verb. */
function byVerb(set: SetSeries): SeriesValue[] {
  const counts = set.objects ?? [];
  const values: SeriesValue[] = [];
  for (const [index, verb] of OBJECT_ACTIONS.entries()) {
    const value = counts[index] ?? 0;
    if (value > 0) values.push({ value, labels: { namespace: set.namespace, name: set.name, verb } });
  }
  return values;
}

const FAMILIES: readonly Family[] = [
  {
    name: 'applyset_ready',
    help: 'Ready of each ApplySet: 1 True, 0 False, -1 Unknown.',
    type: 'gauge',
    values: (set) => (set.ready === undefined ? [] : [{ value: set.ready, labels: setLabels(set) }]),
  },
  {
    name: 'applyset_info',
    help: 'The revision each ApplySet last applied in full (status.lastAppliedRevision), always 1.',
    type: 'gauge',
    values: (set) =>
      set.revision === undefined
        ? []
        : [{ value: 1, labels: { namespace: set.namespace, name: set.name, revision: set.revision } }],
  },
  // A summary's two series, without buckets: a histogram's 8 buckets multiplied by every ApplySet made
  // a fleet's scrape nearly 3 times as large and cost 1.5 KiB more per ApplySet (docs/performance.md),
  // and a quantile of one ApplySet's few reconciles in a rate window says little. The fleet's own
  // histogram (applyset_reconcile_duration_seconds) keeps the buckets.
  {
    name: 'applyset_set_reconcile_duration_seconds_count',
    help: 'Reconciles of each ApplySet, by result (with _sum: their mean duration).',
    type: 'counter',
    values: (set) => byResult(set, 0),
  },
  {
    name: 'applyset_set_reconcile_duration_seconds_sum',
    help: 'Seconds the reconciles of each ApplySet took in all, by result.',
    type: 'counter',
    values: (set) => byResult(set, 1),
  },
  {
    name: 'applyset_set_objects_total',
    help: 'Children of one ApplySet, by what its reconciles did to them (created, configured, unchanged, pruned, conflict, failed).',
    type: 'counter',
    values: byVerb,
  },
  {
    name: 'applyset_drift_total',
    help: 'Objects found changed on the cluster and not corrected (driftMode Warn), summed over runs, by ApplySet.',
    type: 'counter',
    values: (set) => (set.drift === undefined ? [] : [{ value: set.drift, labels: setLabels(set) }]),
  },
  {
    name: 'applyset_fights_total',
    help: 'Fights detected: an object corrected on three runs in a row because someone keeps changing it back, by ApplySet.',
    type: 'counter',
    values: (set) => (set.fights === undefined ? [] : [{ value: set.fights, labels: setLabels(set) }]),
  },
];

/** The family's series of every set, pushed into one array (no array per set kept beside it). */
function seriesOf(family: Family, sets: ReadonlyMap<string, SetSeries>): SeriesValue[] {
  const values: SeriesValue[] = [];
  for (const set of sets.values()) values.push(...family.values(set));
  return values;
}

/**
 * A family as the registry reads it: prom-client's Registry asks a metric for its name, `get()` (the
 * family and its series, for /metrics) and `reset()`; this one answers from the sets' records.
 */
function familyMetric(family: Family, sets: ReadonlyMap<string, SetSeries>): Metric {
  const metric = {
    name: family.name,
    help: family.help,
    type: family.type,
    aggregator: 'sum' as const,
    get: () =>
      Promise.resolve({
        name: family.name,
        help: family.help,
        type: family.type,
        aggregator: 'sum' as const,
        values: seriesOf(family, sets),
      }),
    // The registry's resetMetrics: nothing of this family is reset alone (the controller never calls it).
    reset: () => undefined,
  };
  // prom-client types a registered metric as one of its own classes; the registry reads only the above.
  return metric as unknown as Metric;
}

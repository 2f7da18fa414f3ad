import type { Tracer } from '@opentelemetry/api';
import { startTrace } from '../observability/trace-span.js';
import type { Reconciler } from './reconcile-applyset.js';

/**
 * Each reconcile as a trace of its own (docs/monitoring.md#tracing): its root span `reconcile`, under
 * which the steps open theirs, and its id in the reconcile's log lines (`trace_id`, see
 * reconcile-context.ts). Without a tracer (tracing off) the reconciler is returned as it is.
 */
export function tracedReconciler(tracer: Tracer | undefined, reconcile: Reconciler): Reconciler {
  if (tracer === undefined) return reconcile;
  return (key, worker) => {
    const [namespace = '', name = ''] = key.split('/');
    const root = {
      name: 'reconcile',
      attributes: { 'applyset.namespace': namespace, 'applyset.name': name },
    };
    return startTrace(tracer, root, async (notes) => {
      const requeue = await reconcile(key, worker);
      notes.set({ 'applyset.requeue': requeue.kind });
      return requeue;
    });
  };
}

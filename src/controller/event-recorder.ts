import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../kube/kube-client.js';
import type { ReconcileEvent } from '../api/reconcile-outcome.js';
import { EVENT_MESSAGE_LIMIT } from '../api/describe-outcome.js';

interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string | undefined;
  readonly resourceVersion: string | undefined;
}

export type EventRecorder = (subject: EventSubject, event: ReconcileEvent) => Promise<void>;

const REPORTING_COMPONENT = 'applyset-controller';

/**
 * Records core/v1 Events (what `kubectl describe` and `kubectl get events` show) on the ApplySet. An
 * event that cannot be written is logged and dropped: events are advisory and must never fail a
 * reconcile.
 */
export function createEventRecorder(options: {
  readonly client: KubeClient;
  readonly instance: string;
  readonly now?: () => number;
  readonly onError: (error: unknown) => void;
}): EventRecorder {
  const now = options.now ?? Date.now;
  return async (subject, event) => {
    const stamp = new Date(now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        // client-go names events <object>.<unique suffix>.
        name: `${subject.name}.${randomBytes(8).toString('hex')}`,
        namespace: subject.namespace,
      },
      involvedObject: {
        apiVersion: subject.apiVersion,
        kind: subject.kind,
        namespace: subject.namespace,
        name: subject.name,
        ...(subject.uid === undefined ? {} : { uid: subject.uid }),
        ...(subject.resourceVersion === undefined ? {} : { resourceVersion: subject.resourceVersion }),
      },
      type: event.type,
      reason: event.reason,
      // The API server refuses messages over 1 kB in events.k8s.io; keep core events as short.
      message:
        event.message.length > EVENT_MESSAGE_LIMIT
          ? `${event.message.slice(0, EVENT_MESSAGE_LIMIT - 3)}...`
          : event.message,
      source: { component: REPORTING_COMPONENT },
      reportingComponent: REPORTING_COMPONENT,
      reportingInstance: options.instance,
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
    };
    try {
      await options.client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(subject.namespace)}/events`,
        body: JSON.stringify(body),
      });
    } catch (error) {
      options.onError(error);
    }
  };
}

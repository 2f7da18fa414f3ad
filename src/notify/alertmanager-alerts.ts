import type { NotificationEvent, NotificationState } from './notification-event.js';

/**
 * The alert each state fires or resolves. An applied or recovered set resolves ApplySetNotReady with
 * the same labels it fired with, which is how Alertmanager matches the two.
 */
const NOT_READY = { alertname: 'ApplySetNotReady', severity: 'critical' } as const;
const DRIFTED = { alertname: 'ApplySetDrifted', severity: 'warning' } as const;
const ALERTS: Record<
  NotificationState,
  { readonly alertname: string; readonly severity: string; readonly firing: boolean }
> = {
  // Only forges are told of an apply under way (notifier.ts); were it sent, it would fire nothing.
  progressing: { ...NOT_READY, firing: false },
  applied: { ...NOT_READY, firing: false },
  recovered: { ...NOT_READY, firing: false },
  failed: { ...NOT_READY, firing: true },
  healthTimeout: { ...NOT_READY, firing: true },
  stalled: { ...NOT_READY, firing: true },
  pruneWaiting: { alertname: 'ApplySetPruneWaiting', severity: 'warning', firing: true },
  driftDetected: { ...DRIFTED, firing: true },
  driftCorrected: { ...DRIFTED, firing: false },
  fighting: { alertname: 'ApplySetFighting', severity: 'warning', firing: true },
};

/**
 * The body of Alertmanager's `POST /api/v2/alerts`: a list of alerts with `labels` (identity),
 * `annotations`, `startsAt` and, to resolve one, `endsAt` now.
 */
export function alertmanagerAlerts(
  event: NotificationEvent,
  nowMs: number,
  cluster: string,
): Record<string, unknown>[] {
  // The labels are the alert's identity: the same for the firing and the resolving message.
  const { alertname, severity, firing } = ALERTS[event.state];
  const now = new Date(nowMs).toISOString();
  return [
    {
      labels: {
        alertname,
        cluster,
        namespace: event.namespace,
        applyset: event.name,
        severity,
      },
      annotations: {
        summary: event.summary,
        description: event.details.join('\n'),
        reason: event.reason,
        state: event.state,
        ...(event.revision === undefined ? {} : { revision: event.revision }),
      },
      startsAt: now,
      ...(firing ? {} : { endsAt: now }),
    },
  ];
}

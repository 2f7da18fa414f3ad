import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { chart, find, HELM_TIMEOUT_MS, kinds, release, releaseNamespace, render, useHelm } from './helm-chart-kit.js';

// monitoring.*: the ServiceMonitor, the PrometheusRule and the Grafana dashboard ConfigMap, rendered by
// a real helm (helm-chart-kit.ts). prometheus-rules.test.ts runs the rules themselves through promtool.

useHelm();

const fullname = `${release}-applyset-controller`;
const monitoringObjects = (objects: Awaited<ReturnType<typeof render>>) =>
  kinds(objects).filter(
    (name) =>
      name.startsWith('ServiceMonitor/') || name.startsWith('PrometheusRule/') || name.includes('-dashboard'),
  );
const all = {
  'monitoring.serviceMonitor.enabled': 'true',
  'monitoring.prometheusRule.enabled': 'true',
  'monitoring.grafanaDashboard.enabled': 'true',
};

describe('the chart with monitoring', () => {
  it(
    'installs no ServiceMonitor, PrometheusRule or dashboard by default',
    async () => {
      expect(monitoringObjects(await render())).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'on, scrapes the metrics Service by its port, keeping the ApplySets’ own namespace label',
    async () => {
      const objects = await render({ ...all, 'monitoring.serviceMonitor.labels.release': 'kps' });
      expect(monitoringObjects(objects)).toEqual([
        `ConfigMap/${releaseNamespace}/${fullname}-dashboard`,
        `PrometheusRule/${releaseNamespace}/${fullname}`,
        `ServiceMonitor/${releaseNamespace}/${fullname}`,
      ]);
      const monitor = find(objects, 'ServiceMonitor', fullname);
      expect(monitor.metadata.labels).toMatchObject({ release: 'kps' });
      const service = find(objects, 'Service', `${fullname}-metrics`) as unknown as {
        metadata: { labels: Record<string, string> };
        spec: { ports: { name: string }[] };
      };
      const spec = (monitor as unknown as { spec: { selector: { matchLabels: Record<string, string> } } })
        .spec;
      expect(service.metadata.labels).toMatchObject(spec.selector.matchLabels);
      expect(service.spec.ports.map((port) => port.name)).toContain('metrics');
      expect(monitor).toMatchObject({
        spec: {
          namespaceSelector: { matchNames: [releaseNamespace] },
          endpoints: [{ port: 'metrics', path: '/metrics', honorLabels: true, interval: '30s' }],
        },
      });
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'refuses a ServiceMonitor without the metrics Service it would scrape',
    async () => {
      await expect(
        render({ 'monitoring.serviceMonitor.enabled': 'true', 'metrics.service.enabled': 'false' }),
      ).rejects.toThrow('monitoring.serviceMonitor.enabled needs metrics.service.enabled');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'writes the thresholds and extra labels of the values into the alerts',
    async () => {
      const objects = await render({
        'monitoring.prometheusRule.enabled': 'true',
        'monitoring.prometheusRule.thresholds.notReadyFor': '45m',
        'monitoring.prometheusRule.thresholds.queueDepth': '7',
        'monitoring.prometheusRule.additionalLabels.team': 'platform',
      });
      const rule = find(objects, 'PrometheusRule', fullname) as unknown as {
        spec: { groups: { rules: { alert: string; expr: string; for?: string; labels: object }[] }[] };
      };
      const alerts = rule.spec.groups.flatMap((group) => group.rules);
      expect(alerts.map((alert) => alert.alert)).toEqual([
        'ApplySetNotReady',
        'ApplySetStalled',
        'ApplySetDriftDetected',
        'ApplySetFighting',
        'ApplySetReconcileErrorsRising',
        'ApplySetControllerDown',
        'ApplySetNoLeader',
        'ApplySetQueueBackingUp',
        'ApplySetGitFetchErrors',
      ]);
      const byName = new Map(alerts.map((alert) => [alert.alert, alert]));
      expect(byName.get('ApplySetNotReady')?.for).toBe('45m');
      expect(byName.get('ApplySetQueueBackingUp')?.expr).toMatch(/ > 7$/);
      for (const alert of alerts) expect(alert.labels).toMatchObject({ team: 'platform' });
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'ships the dashboard file unchanged in a ConfigMap Grafana’s sidecar loads',
    async () => {
      const objects = await render({
        'monitoring.grafanaDashboard.enabled': 'true',
        'monitoring.grafanaDashboard.namespace': 'monitoring',
      });
      const configMap = find(objects, 'ConfigMap', `${fullname}-dashboard`) as unknown as {
        metadata: { namespace: string; labels: Record<string, string> };
        data: Record<string, string>;
      };
      expect(configMap.metadata.namespace).toBe('monitoring');
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
      const file = await readFile(path.join(chart, 'files/grafana-dashboard.json'), 'utf8');
      expect(configMap.data['applyset-controller.json']).toBe(file.trimEnd());
      const dashboard = JSON.parse(file) as { templating: { list: { name: string }[] } };
      expect(dashboard.templating.list.map((variable) => variable.name)).toEqual([
        'datasource',
        'job',
        'namespace',
        'name',
      ]);
    },
    HELM_TIMEOUT_MS,
  );
});

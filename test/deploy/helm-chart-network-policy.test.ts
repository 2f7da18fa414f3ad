import { HELM_TIMEOUT_MS, networkPolicy, render, useHelm } from './helm-chart-kit.js';

// The NetworkPolicy the chart renders (rendered by a real helm, helm-chart-kit.ts).

useHelm();

describe('the chart NetworkPolicy', () => {
  it(
    'admits the webhook port from anywhere when the webhook is on, or from the peers the values name',
    async () => {
      const hooks = { 'webhook.enabled': 'true', 'webhook.secretName': 'hooks' };
      const open = networkPolicy(await render(hooks)).spec.ingress;
      expect(open).toHaveLength(2);
      // No `from`: every source, as forges call from outside the cluster.
      expect(open[1]).toEqual({ ports: [{ port: 'webhook', protocol: 'TCP' }] });
      const ingressNginx = {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
      };
      const narrowed = networkPolicy(
        await render(hooks, ['--set-json', `networkPolicy.webhook.from=${JSON.stringify([ingressNginx])}`]),
      ).spec.ingress;
      expect(narrowed[1]).toEqual({
        ports: [{ port: 'webhook', protocol: 'TCP' }],
        from: [ingressNginx],
      });
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'admits the metrics port from the release namespace alone, or from the peers the values name',
    async () => {
      const alone = networkPolicy(await render({}, ['--set-json', 'networkPolicy.metrics.from=[]'])).spec
        .ingress;
      expect(alone).toEqual([{ ports: [{ port: 'metrics', protocol: 'TCP' }], from: [{ podSelector: {} }] }]);
      const everywhere = networkPolicy(
        await render({}, ['--set-json', 'networkPolicy.metrics.from=[{"namespaceSelector":{}}]']),
      ).spec.ingress;
      expect(everywhere[0]?.from).toEqual([{ podSelector: {} }, { namespaceSelector: {} }]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'is left out with one value',
    async () => {
      const objects = await render({ 'networkPolicy.enabled': 'false' });
      expect(objects.filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );
});

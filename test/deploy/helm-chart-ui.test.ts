import {
  controllerContainer,
  find,
  HELM_TIMEOUT_MS,
  kinds,
  networkPolicy,
  release,
  releaseNamespace,
  render,
  rules,
  useHelm,
  type K8sObject,
} from './helm-chart-kit.js';

// The web view as the chart serves it (ui.*), rendered by a real helm (helm-chart-kit.ts).

useHelm();

const fullname = `${release}-applyset-controller`;
const uiObjects = (objects: readonly K8sObject[]) =>
  kinds(objects).filter((name) => name.includes('-ui') || name.startsWith('Ingress/'));

describe('the chart with the web view', () => {
  it(
    'serves nothing, opens no port and grants no review right by default',
    async () => {
      const objects = await render();
      expect(uiObjects(objects)).toEqual([]);
      const { container } = controllerContainer(objects);
      expect(container.args).not.toContain('--ui-address');
      expect(container.ports.map((port) => port.name)).toEqual(['metrics']);
      expect(networkPolicy(objects).spec.ingress.map((rule) => rule.ports[0]?.port)).toEqual(['metrics']);
      const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding');
      expect(bindings.map((o) => (o as unknown as { roleRef: { name: string } }).roleRef.name)).not.toContain(
        'system:auth-delegator',
      );
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'on, serves the view on its port through a Service of its own, with the rights to review tokens',
    async () => {
      const objects = await render({ 'ui.enabled': 'true', 'ui.port': '8091' });
      expect(uiObjects(objects)).toEqual([
        `ClusterRole//${fullname}-ui-events`,
        `ClusterRoleBinding//${fullname}-ui-events`,
        `ClusterRoleBinding//${fullname}-ui-reviews`,
        `Service/${releaseNamespace}/${fullname}-ui`,
      ]);
      // Read only: the Events about ApplySets, for the ApplySet page.
      expect(rules(find(objects, 'ClusterRole', `${fullname}-ui-events`))).toEqual([
        { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
      ]);
      const { container } = controllerContainer(objects);
      const at = container.args.indexOf('--ui-address');
      expect(container.args[at + 1]).toBe(':8091');
      expect(container.ports).toContainEqual(expect.objectContaining({ name: 'ui', containerPort: 8091 }));
      expect(find(objects, 'Service', `${fullname}-ui`)).toMatchObject({
        spec: { type: 'ClusterIP', ports: [{ name: 'ui', port: 80, targetPort: 'ui', protocol: 'TCP' }] },
      });
      expect(find(objects, 'ClusterRoleBinding', `${fullname}-ui-reviews`)).toMatchObject({
        roleRef: { kind: 'ClusterRole', name: 'system:auth-delegator' },
        subjects: [{ kind: 'ServiceAccount', name: fullname, namespace: releaseNamespace }],
      });
      // Open to anyone by default (each request still needs a token), or to the peers named.
      expect(networkPolicy(objects).spec.ingress[1]).toEqual({ ports: [{ port: 'ui', protocol: 'TCP' }] });
      const peer = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
      const narrowed = await render({ 'ui.enabled': 'true' }, [
        '--set-json',
        `networkPolicy.ui.from=${JSON.stringify([peer])}`,
      ]);
      expect(networkPolicy(narrowed).spec.ingress[1]?.from).toEqual([peer]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'binds the review rights cluster-wide with namespaced RBAC too (events in the watched namespace), and none when RBAC is not the chart’s',
    async () => {
      const namespaced = await render({ 'ui.enabled': 'true', 'rbac.namespaced': 'true' });
      expect(uiObjects(namespaced)).toEqual([
        `ClusterRoleBinding//${fullname}-ui-reviews`,
        `Role/${releaseNamespace}/${fullname}-ui-events`,
        `RoleBinding/${releaseNamespace}/${fullname}-ui-events`,
        `Service/${releaseNamespace}/${fullname}-ui`,
      ]);
      const own = await render({ 'ui.enabled': 'true', 'rbac.create': 'false' });
      expect(uiObjects(own)).toEqual([`Service/${releaseNamespace}/${fullname}-ui`]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'adds an Ingress to the Service when asked, with its class, host, TLS and annotations',
    async () => {
      const plain = await render({ 'ui.enabled': 'true', 'ui.ingress.enabled': 'true' });
      expect(find(plain, 'Ingress', `${fullname}-ui`)).toMatchObject({
        spec: {
          rules: [
            {
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: `${fullname}-ui`, port: { name: 'ui' } } },
                  },
                ],
              },
            },
          ],
        },
      });
      const tls = [{ secretName: 'applysets-tls', hosts: ['applysets.example.com'] }];
      const full = await render(
        {
          'ui.enabled': 'true',
          'ui.ingress.enabled': 'true',
          'ui.ingress.className': 'nginx',
          'ui.ingress.host': 'applysets.example.com',
          'ui.ingress.annotations.cert-manager\\.io/cluster-issuer': 'letsencrypt',
        },
        ['--set-json', `ui.ingress.tls=${JSON.stringify(tls)}`],
      );
      expect(find(full, 'Ingress', `${fullname}-ui`)).toMatchObject({
        metadata: { annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } },
        spec: { ingressClassName: 'nginx', tls, rules: [{ host: 'applysets.example.com' }] },
      });
      // The Ingress needs the view: with ui.enabled false there is nothing to route to.
      const off = await render({ 'ui.ingress.enabled': 'true' });
      expect(uiObjects(off)).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );
});

import {
  release,
  releaseNamespace,
  HELM_TIMEOUT_MS,
  DEFAULT_GIT_LIMIT_ARGS,
  DEFAULT_NOTIFICATION_ARGS,
  render,
  find,
  controllerContainer,
  rules,
  allows,
  controllerNeeds,
  useHelm,
} from './helm-chart-kit.js';

// The chart with rbac.namespaced=true (rendered by a real helm, helm-chart-kit.ts).

useHelm();

describe('the chart with rbac.namespaced=true', () => {
  it(
    'grants rights in the watched namespace only and watches only it',
    async () => {
      const objects = await render({ 'rbac.namespaced': 'true', watchNamespace: 'team-a' });
      const name = `${release}-applyset-controller`;
      expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
      expect(objects.filter((o) => o.metadata.name.endsWith('-children'))).toEqual([]);
      for (const roleName of [name]) {
        expect(find(objects, 'Role', roleName).metadata.namespace).toBe('team-a');
        expect(find(objects, 'RoleBinding', roleName)).toMatchObject({
          metadata: { namespace: 'team-a' },
          roleRef: { kind: 'Role', name: roleName },
          subjects: [{ kind: 'ServiceAccount', name, namespace: releaseNamespace }],
        });
      }
      const role = rules(find(objects, 'Role', name));
      for (const [group, resource, verbs] of controllerNeeds)
        for (const verb of verbs)
          expect([resource, verb, allows(role, group, resource, verb)]).toEqual([resource, verb, true]);
      expect(find(objects, 'Role', `${name}-leader-election`).metadata.namespace).toBe(releaseNamespace);
      expect(controllerContainer(objects).container.args).toEqual([
        'controller',
        '--metrics-addr',
        ':8080',
        '--leader-elect',
        '--concurrency',
        '4',
        '--member-watches',
        '16',
        '--member-watch-min-sets',
        '8',
        '--namespace',
        'team-a',
        ...DEFAULT_GIT_LIMIT_ARGS,
        ...DEFAULT_NOTIFICATION_ARGS,
      ]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'watches the release namespace when no namespace is given',
    async () => {
      const objects = await render({ 'rbac.namespaced': 'true' });
      expect(find(objects, 'Role', `${release}-applyset-controller`).metadata.namespace).toBe(
        releaseNamespace,
      );
      const args = controllerContainer(objects).container.args;
      expect(args.slice(args.indexOf('--namespace'), args.indexOf('--namespace') + 2)).toEqual([
        '--namespace',
        releaseNamespace,
      ]);
    },
    HELM_TIMEOUT_MS,
  );
});

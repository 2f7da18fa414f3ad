import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as yaml from 'js-yaml';
import {
  allows,
  controllerContainer,
  DEFAULT_NOTIFICATION_ARGS,
  find,
  HELM_TIMEOUT_MS,
  kinds,
  release,
  releaseNamespace,
  render,
  root,
  rules,
  useHelm,
} from './helm-chart-kit.js';

// Notifications as the chart sets them up (clusterName, notifications.*), rendered by a real helm.

useHelm();

const fullname = `${release}-applyset-controller`;
const argAfter = (args: readonly string[], flag: string) => args[args.indexOf(flag) + 1];

describe('the chart and notifications', () => {
  it(
    "passes today's delivery settings by default, and no cluster name",
    async () => {
      const { container } = controllerContainer(await render());
      expect(container.args.slice(-DEFAULT_NOTIFICATION_ARGS.length)).toEqual(DEFAULT_NOTIFICATION_ARGS);
      expect(container.args).not.toContain('--cluster-name');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'passes clusterName and notifications.* as the controller flags',
    async () => {
      const { container } = controllerContainer(
        await render({
          clusterName: 'prod-eu',
          'notifications.ratePerSecond': '5',
          'notifications.timeout': '3s',
          'notifications.attempts': '2',
          'notifications.queueLength': '500',
          'notifications.internalHosts[0]': 'alertmanager.monitoring.svc:9093',
          'notifications.internalHosts[1]': '10.0.0.7',
        }),
      );
      const { args } = container;
      expect(argAfter(args, '--cluster-name')).toBe('prod-eu');
      expect(argAfter(args, '--notification-rate')).toBe('5');
      expect(argAfter(args, '--notification-timeout')).toBe('3s');
      expect(argAfter(args, '--notification-attempts')).toBe('2');
      expect(argAfter(args, '--notification-queue-length')).toBe('500');
      expect(argAfter(args, '--internal-notification-hosts')).toBe('alertmanager.monitoring.svc:9093,10.0.0.7');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    "lists ClusterNotifications and reads namespaces' labels; their Secrets by name, in its own namespace only",
    async () => {
      const plain = await render();
      const role = rules(find(plain, 'ClusterRole', fullname));
      expect(allows(role, 'applyset.dev', 'clusternotifications', 'list')).toBe(true);
      expect(allows(role, 'applyset.dev', 'clusternotifications', 'watch')).toBe(true);
      expect(allows(role, '', 'namespaces', 'get')).toBe(true);
      expect(allows(role, '', 'secrets', 'get')).toBe(false);
      expect(kinds(plain).filter((name) => name.includes('notification-secrets'))).toEqual([]);

      const named = await render({ 'notifications.clusterSecretNames[0]': 'platform-slack' });
      const secrets = find(named, 'Role', `${fullname}-notification-secrets`);
      expect(secrets.metadata.namespace).toBe(releaseNamespace);
      expect(rules(secrets)).toEqual([
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['platform-slack'], verbs: ['get'] },
      ]);
      expect(find(named, 'RoleBinding', `${fullname}-notification-secrets`)).toMatchObject({
        roleRef: { kind: 'Role', name: `${fullname}-notification-secrets` },
      });
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'grants nothing cluster-scoped with namespaced RBAC',
    async () => {
      const objects = await render({
        'rbac.namespaced': 'true',
        'notifications.clusterSecretNames[0]': 'platform-slack',
      });
      const role = rules(find(objects, 'Role', fullname));
      expect(allows(role, 'applyset.dev', 'clusternotifications', 'list')).toBe(false);
      expect(kinds(objects).filter((name) => name.includes('notification-secrets'))).toEqual([]);
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'ships the ClusterNotification CRD, cluster-scoped and identical to crds/',
    async () => {
      const withCrds = await render({}, ['--include-crds']);
      const crd = find(withCrds, 'CustomResourceDefinition', 'clusternotifications.applyset.dev');
      expect(crd).toEqual(
        yaml.load(readFileSync(path.join(root, 'crds/applyset.dev_clusternotifications.yaml'), 'utf8')),
      );
      expect(crd).toMatchObject({ spec: { scope: 'Cluster' } });
    },
    HELM_TIMEOUT_MS,
  );
});

import { markDeploymentRolledOut } from '../apply/apply-test-kit.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  kubectl,
  kubectlApply,
  waitForReady,
  type ApplySetOptions,
  type ApplySetView,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';

// spec.dependsOn naming objects that are not ApplySets, with the controller as its own process: each
// is read as the ApplySet's account and must be Current by kstatus's rules before anything is fetched.
// Nothing watches such an object: the set looks again every spec.retryInterval (2s here), while its
// interval is 1h, so the apply after the dependency becomes Current comes from that look alone.

const deploymentYaml = (namespace: string, name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: ${name}, image: registry.k8s.io/pause:3.10 }] }
`;

describe('spec.dependsOn naming objects', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-depends-obj');
  let git: GitTestServer | undefined;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'after-cm/cm.yaml': configMapYaml('after-cm', { set: 'after-cm' }),
      'after-deploy/cm.yaml': configMapYaml('after-deploy', { set: 'after-deploy' }),
      'denied/cm.yaml': configMapYaml('denied', { set: 'denied' }),
      'cluster-scoped/cm.yaml': configMapYaml('cluster-scoped', { set: 'cluster-scoped' }),
      'foreign/cm.yaml': configMapYaml('foreign', { set: 'foreign' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  const create = (name: string, options: Omit<ApplySetOptions, 'url'>, spec: object) =>
    createApplySetWithSpec(c, namespace, name, { url: git?.url ?? '', interval: '1h', ...options }, spec);

  const notReady = (name: string, reason: string, text: string): Promise<ApplySetView> =>
    waitForReady(
      c,
      namespace,
      name,
      'False',
      (view) =>
        condition(view, 'Ready')?.reason === reason &&
        (condition(view, 'Ready')?.message.includes(text) ?? false),
      120_000,
    );

  it('waits for a ConfigMap that does not exist, naming it, and applies once it is created', async () => {
    await create(
      'after-cm',
      { path: 'after-cm' },
      {
        dependsOn: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }],
      },
    );
    const waiting = await notReady('after-cm', 'DependencyNotReady', `ConfigMap ${namespace}/settings`);
    expect(condition(waiting, 'Ready')?.message).toBe(
      `waiting for dependencies: ConfigMap ${namespace}/settings is NotFound: the object does not exist`,
    );
    expect(condition(waiting, 'Stalled')?.status).toBe('False');
    expect(await configMapData(c, namespace, 'after-cm')).toBeUndefined();

    await kubectlApply(configMapYaml('settings', { ready: 'yes' }, namespace));
    const ready = await waitForReady(c, namespace, 'after-cm', 'True', undefined, 120_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    expect(await configMapData(c, namespace, 'after-cm')).toEqual({ set: 'after-cm' });
  });

  it('waits while a Deployment is InProgress, with its kstatus message, and applies once it is Current', async () => {
    // No deployment controller runs here: the test writes the Deployment's status as one would.
    await kubectlApply(deploymentYaml(namespace, 'postgres'));
    await create(
      'after-deploy',
      { path: 'after-deploy' },
      {
        dependsOn: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'postgres', namespace }],
      },
    );
    await notReady('after-deploy', 'DependencyNotReady', `Deployment ${namespace}/postgres is InProgress`);
    const status = {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 0,
      availableReplicas: 0,
      conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }],
    };
    await kubectl([
      '-n',
      namespace,
      'patch',
      'deployment',
      'postgres',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
    const waiting = await notReady('after-deploy', 'DependencyNotReady', '0 of 1 replicas available');
    expect(condition(waiting, 'Ready')?.message).toBe(
      `waiting for dependencies: Deployment ${namespace}/postgres is InProgress: 0 of 1 replicas available`,
    );
    expect(await configMapData(c, namespace, 'after-deploy')).toBeUndefined();

    await markDeploymentRolledOut(namespace, 'postgres', 1);
    await waitForReady(c, namespace, 'after-deploy', 'True', undefined, 120_000);
    expect(await configMapData(c, namespace, 'after-deploy')).toEqual({ set: 'after-deploy' });
  });

  it('stalls, naming the object and the RBAC to grant, when the account may not read it', async () => {
    // An account with no rights at all: it may not get the ConfigMap the first test created.
    await kubectlApply(
      `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: nobody, namespace: ${namespace} }\n`,
    );
    await create(
      'denied',
      { path: 'denied', serviceAccountName: 'nobody' },
      {
        dependsOn: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' }],
      },
    );
    const stalled = await notReady('denied', 'DependencyNotReadable', `ConfigMap ${namespace}/settings`);
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'DependencyNotReadable' });
    expect(condition(stalled, 'Ready')?.message).toBe(
      `the ApplySet's ServiceAccount ${namespace}/nobody may not read what spec.dependsOn names; ` +
        `ConfigMap ${namespace}/settings: grant it get on configmaps (a Role in namespace ${namespace} with resourceNames: [settings]); ` +
        'nothing was fetched or applied',
    );
    expect(await configMapData(c, namespace, 'denied')).toBeUndefined();
  });

  it('reads a cluster-scoped kind whatever its namespace says, and refuses an object of another namespace by default', async () => {
    // The controller runs with its default, refusing every reference to another namespace.
    await create(
      'cluster-scoped',
      { path: 'cluster-scoped' },
      {
        dependsOn: [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            // A name with ':' (a bootstrap ClusterRole's): any kind's name is taken, not only DNS names.
            name: 'system:aggregate-to-view',
            namespace: 'elsewhere',
          },
        ],
      },
    );
    await create(
      'foreign',
      { path: 'foreign' },
      {
        dependsOn: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'kube-system' }],
      },
    );
    // Read as the ApplySet's account (the controller's default ServiceAccount, with no cluster-wide
    // rights): not refused as another namespace, but read, and stalled naming the ClusterRole to grant.
    const scoped = await notReady(
      'cluster-scoped',
      'DependencyNotReadable',
      'ClusterRole system:aggregate-to-view',
    );
    expect(condition(scoped, 'Ready')?.message).toContain(
      'ClusterRole system:aggregate-to-view: grant it get on clusterroles.rbac.authorization.k8s.io (a ClusterRole and ClusterRoleBinding with resourceNames: [system:aggregate-to-view])',
    );
    expect(await configMapData(c, namespace, 'cluster-scoped')).toBeUndefined();
    const refused = await notReady('foreign', 'CrossNamespaceRefRefused', 'ConfigMap kube-system/settings');
    expect(condition(refused, 'Ready')?.message).toBe(
      'spec.dependsOn names ConfigMap kube-system/settings of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied',
    );
    expect(await configMapData(c, namespace, 'foreign')).toBeUndefined();
  });
});

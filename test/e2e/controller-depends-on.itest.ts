import { markDeploymentRolledOut } from '../apply/apply-test-kit.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  patchApplySet,
  startController,
  waitFor,
  waitForReady,
  type ApplySetOptions,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';

// spec.dependsOn with the controller as its own process: an ApplySet is not applied until the ones it
// names are Ready at their generation, and it is reconciled as soon as they become so, through the
// controller's watch of ApplySets (every interval here is 1h, so nothing else would reconcile it in
// time). A cycle stalls every ApplySet in it, and breaking it lets them all apply.

const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name} }
spec:
  replicas: 3
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: ${name}, image: registry.k8s.io/pause:3.10 }] }
`;

describe('spec.dependsOn', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-depends');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'db/deploy.yaml': deployment('db'),
      'app/settings.yaml': configMapYaml('app-settings', { color: 'blue' }),
      'a/a.yaml': configMapYaml('a-settings', { set: 'a' }),
      'b/b.yaml': configMapYaml('b-settings', { set: 'b' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  /** An ApplySet with an interval of 1h and the given extra spec fields. */
  const create = (name: string, options: Omit<ApplySetOptions, 'url'>, spec: object) =>
    createApplySetWithSpec(c, namespace, name, { url: git.url, interval: '1h', ...options }, spec);

  const waitingFor = (name: string, text: string) =>
    waitForReady(
      c,
      namespace,
      name,
      'False',
      (view) =>
        condition(view, 'Ready')?.reason === 'DependencyNotReady' &&
        (condition(view, 'Ready')?.message.includes(text) ?? false),
      120_000,
    );

  it('applies an ApplySet only once its dependency is Ready, woken by the dependency`s status', async () => {
    await create('app', { path: 'app' }, { dependsOn: [{ name: 'db' }] });
    const missing = await waitingFor('app', `${namespace}/db: not found`);
    expect(condition(missing, 'Ready')?.message).toBe(`waiting for dependencies: ${namespace}/db: not found`);
    expect(condition(missing, 'Stalled')?.status).toBe('False');

    // db waits for its Deployment to roll out, which nothing does until the test says so.
    await create('db', { path: 'db' }, { wait: true, timeout: '2m' });
    await waitFor(
      'the db Deployment',
      async () => (await c.apps.readNamespacedDeployment({ namespace, name: 'db' })) ?? undefined,
      120_000,
    );
    const waiting = await waitingFor('app', `${namespace}/db: Ready=`);
    expect(condition(waiting, 'Ready')?.message).toMatch(
      new RegExp(
        `^waiting for dependencies: ${namespace}/db: Ready=(Unknown \\(Progressing\\)|False \\(HealthCheckFailed\\))$`,
      ),
    );
    expect(await configMapData(c, namespace, 'app-settings')).toBeUndefined();

    // The rollout completes: db becomes Ready, and app follows without waiting for its interval.
    await markDeploymentRolledOut(namespace, 'db', 3);
    await waitForReady(c, namespace, 'db', 'True', undefined, 120_000);
    const ready = await waitForReady(c, namespace, 'app', 'True', undefined, 120_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    expect(await configMapData(c, namespace, 'app-settings')).toEqual({ color: 'blue' });
  });

  it('stalls both ApplySets of a cycle, naming it, and applies both once it is broken', async () => {
    await create('a', { path: 'a' }, { dependsOn: [{ name: 'b' }] });
    await create('b', { path: 'b' }, { dependsOn: [{ name: 'a' }] });
    const stalled = (name: string) =>
      waitForReady(
        c,
        namespace,
        name,
        'False',
        (view) => condition(view, 'Ready')?.reason === 'DependencyCycle',
        120_000,
      );
    const a = await stalled('a');
    const b = await stalled('b');
    expect(condition(a, 'Stalled')).toMatchObject({ status: 'True', reason: 'DependencyCycle' });
    expect(condition(a, 'Ready')?.message).toBe(
      `spec.dependsOn makes a cycle: ${namespace}/a -> ${namespace}/b -> ${namespace}/a; nothing was fetched or applied`,
    );
    expect(condition(b, 'Ready')?.message).toContain(`${namespace}/b -> ${namespace}/a -> ${namespace}/b`);
    expect(await configMapData(c, namespace, 'a-settings')).toBeUndefined();
    expect(await configMapData(c, namespace, 'b-settings')).toBeUndefined();

    // b no longer waits for a: b applies, and its Ready wakes a, which applies too.
    await patchApplySet(namespace, 'b', { spec: { dependsOn: null } });
    await waitForReady(c, namespace, 'b', 'True', undefined, 120_000);
    await waitForReady(c, namespace, 'a', 'True', undefined, 120_000);
    expect(await configMapData(c, namespace, 'a-settings')).toEqual({ set: 'a' });
    expect(await configMapData(c, namespace, 'b-settings')).toEqual({ set: 'b' });
  });
});

describe('spec.dependsOn across namespaces', () => {
  const c = cluster();
  const locked = uniqueName('e2e-depends-locked');
  const open = uniqueName('e2e-depends-open');
  const infra = uniqueName('e2e-depends-infra');
  let git: GitTestServer;

  beforeAll(async () => {
    await installCrd();
    for (const namespace of [locked, open, infra]) await createNamespace(c.kc, namespace);
    git = await startGitServer({ files: { 'cm.yaml': configMapYaml('app-settings', { k: 'v' }) } });
    // infra/queue exists, but no controller here watches infra: nothing ever reconciles it.
    await createApplySet(c, infra, 'queue', { url: git.url, interval: '1h' });
    // The default refuses; the old flag that asked for it is still accepted.
    await startController({ namespace: locked, args: ['--no-cross-namespace-refs'] });
    await startController({ namespace: open, args: ['--allow-cross-namespace-refs'] });
  });

  afterAll(() => stopControllersAndGit(git));

  const createApp = (namespace: string) =>
    createApplySetWithSpec(
      c,
      namespace,
      'app',
      { url: git.url, interval: '1h' },
      { dependsOn: [{ name: 'queue', namespace: infra }] },
    );

  it('is refused by default, before anything is read or applied', async () => {
    await createApp(locked);
    const view = await waitForReady(
      c,
      locked,
      'app',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'CrossNamespaceRefRefused',
      120_000,
    );
    expect(condition(view, 'Stalled')).toMatchObject({ status: 'True', reason: 'CrossNamespaceRefRefused' });
    expect(condition(view, 'Ready')?.message).toBe(
      `spec.dependsOn names ApplySet ${infra}/queue of another namespace, and the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs); nothing was fetched or applied`,
    );
    expect(await configMapData(c, locked, 'app-settings')).toBeUndefined();
  });

  it('is read, beyond the namespace the controller watches, under --allow-cross-namespace-refs', async () => {
    await createApp(open);
    const view = await waitForReady(
      c,
      open,
      'app',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'DependencyNotReady',
      120_000,
    );
    expect(condition(view, 'Ready')?.message).toBe(
      `waiting for dependencies: ${infra}/queue: generation 1 not yet observed`,
    );
    expect(await configMapData(c, open, 'app-settings')).toBeUndefined();
  });
});

import * as k8s from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { finishJob } from './job-status.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  getApplySet,
  GROUP,
  patchApplySet,
  PLURAL,
  VERSION,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #38: a repository written for Argo CD, moved as it is. Its objects carry only Argo CD's
// annotations: a PreSync Job and a PostSync Job named by generateName (a new Job each sync, as Argo CD
// creates them), waves 0, 1 and 2 of ordinary objects with a Job in wave 0 that gates wave 1, and a
// Sync hook of wave 1 that gates wave 2. The test follows the order Argo CD's sync documents (PreSync hooks, then each
// wave healthy before the next, the Sync hooks with their wave, PostSync once all is healthy) by
// holding each step's Job until it has checked that nothing of a later step exists yet. This profile
// runs no Job controller: the test writes each Job's status, as the Job controller would.

const job = (metadata: string, annotations: Record<string, string>) => `apiVersion: batch/v1
kind: Job
metadata:
  ${metadata}
  annotations: ${JSON.stringify(annotations)}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: registry.example/tools:v1}]
`;

const service = (name: string, annotations: Record<string, string>) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  annotations: ${JSON.stringify(annotations)}
spec:
  selector: {tier: ${name}}
  ports: [{port: 8080, targetPort: 8080}]
`;

const shop = (release: string) => ({
  'schema-check.yaml': job('generateName: schema-check-', { 'argocd.argoproj.io/hook': 'PreSync' }),
  'backend.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: backend
data: {release: "${release}"}
`,
  'backend-svc.yaml': service('backend-svc', {}),
  'seed.yaml': job('name: seed-data', {}),
  'frontend.yaml': service('frontend', { 'argocd.argoproj.io/sync-wave': '1' }),
  'edge.yaml': service('edge', { 'argocd.argoproj.io/sync-wave': '2' }),
  'page-up.yaml': job('generateName: page-up-', {
    'argocd.argoproj.io/hook': 'Sync',
    'argocd.argoproj.io/sync-wave': '1',
  }),
  'page-down.yaml': job('generateName: page-down-', {
    'argocd.argoproj.io/hook': 'PostSync',
    'argocd.argoproj.io/hook-delete-policy': 'HookSucceeded',
  }),
});

// A Sync hook of wave 0 that fails: wave 1 is never applied, and the SyncFail hook runs.
const failing = {
  'failing/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: failing-config}\n',
  'failing/check.yaml': job('name: failing-check', { 'argocd.argoproj.io/hook': 'Sync' }),
  'failing/later.yaml': service('failing-later', { 'argocd.argoproj.io/sync-wave': '1' }),
  'failing/notify.yaml': job('generateName: failing-notify-', { 'argocd.argoproj.io/hook': 'SyncFail' }),
};

const files = (release: string) => ({
  ...Object.fromEntries(Object.entries(shop(release)).map(([name, text]) => [`shop/${name}`, text])),
  ...failing,
});

describe('a repository written for Argo CD', () => {
  const c = cluster();
  const batch = c.kc.makeApiClient(k8s.BatchV1Api);
  const namespace = uniqueName('e2e-argocd');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, files('v1')));
  });

  afterAll(() => stopControllersAndGit(git));

  const jobsNamed = async (prefix: string) =>
    (await batch.listNamespacedJob({ namespace })).items
      .map((item) => item.metadata?.name ?? '')
      .filter((name) => name.startsWith(prefix))
      .sort();
  /** The one Job of this prefix not seen before, once it exists. */
  const newJob = (prefix: string, seen: readonly string[] = []) =>
    waitFor(
      `a new ${prefix}* Job`,
      async () => (await jobsNamed(prefix)).find((name) => !seen.includes(name)),
      90_000,
    );
  const serviceExists = (name: string) =>
    c.core.readNamespacedService({ namespace, name }).then(
      () => true,
      (error: { code?: number }) => {
        if (error.code === 404) return false;
        throw error;
      },
    );
  const complete = (name: string) => finishJob(batch, namespace, name, 'Complete');

  it('runs it in the order Argo CD syncs it: PreSync, wave 0, wave 1 with its Sync hook, wave 2, PostSync', async () => {
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: applySetBody(namespace, 'shop', { url: git.url, path: 'shop', interval: '1h' }),
    });

    // PreSync: a Job the API server named from its generateName; nothing of the set exists yet.
    const schemaCheck = await newJob('schema-check-');
    expect(schemaCheck).toMatch(/^schema-check-[a-z0-9]{5}$/);
    expect(await configMapData(c, namespace, 'backend')).toBeUndefined();
    expect(await jobsNamed('seed-data')).toEqual([]);
    await complete(schemaCheck);

    // Wave 0 is applied; wave 1 waits until its Job is complete.
    await waitFor(
      'the Job of wave 0',
      async () => ((await jobsNamed('seed-data')).length > 0 ? true : undefined),
      90_000,
    );
    expect(await configMapData(c, namespace, 'backend')).toEqual({ release: 'v1' });
    expect(await serviceExists('backend-svc')).toBe(true);
    expect(await serviceExists('frontend')).toBe(false);
    expect(await jobsNamed('page-up-')).toEqual([]);
    await complete('seed-data');

    // Wave 1 and its Sync hook, created together; wave 2 waits for the hook to finish.
    const pageUp = await newJob('page-up-');
    expect(await serviceExists('frontend')).toBe(true);
    expect(await serviceExists('edge')).toBe(false);
    expect(await jobsNamed('page-down-')).toEqual([]);
    await complete(pageUp);
    await waitFor('wave 2', async () => ((await serviceExists('edge')) ? true : undefined), 90_000);

    // PostSync, once everything is healthy; HookSucceeded deletes it after it completes.
    const pageDown = await newJob('page-down-');
    await complete(pageDown);
    await waitForAppliedCommit(c, namespace, 'shop', await git.revParse('main'), 90_000);
    await waitFor(
      'the PostSync Job deleted by its policy',
      async () => ((await jobsNamed('page-down-')).length === 0 ? true : undefined),
      60_000,
    );

    // Hooks are not the set's objects; the objects are, Argo CD's annotations and all.
    const view = await getApplySet(c, namespace, 'shop');
    const inventory = view?.metadata.annotations?.['kubectl.kubernetes.io/last-applied-objects'] ?? '';
    expect(inventory.split(/[\n,]/).filter((line) => line !== '').length).toBe(5);
    for (const name of ['backend', 'backend-svc', 'seed-data', 'frontend', 'edge']) {
      expect(inventory).toContain(name);
    }
    for (const name of ['schema-check', 'page-up', 'page-down']) expect(inventory).not.toContain(name);
  });

  it('creates each generateName hook anew on the next sync, leaving the ones without a delete policy', async () => {
    const before = await jobsNamed('page-up-');
    const sha = await git.commitTree(files('v2'));
    await patchApplySet(namespace, 'shop', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': sha } },
    });
    const seenChecks = await jobsNamed('schema-check-');
    await complete(await newJob('schema-check-', seenChecks));
    // seed-data is complete already: wave 0 is healthy at once, and wave 1's Sync hook is a new Job.
    const pageUp = await newJob('page-up-', before);
    await complete(pageUp);
    await complete(await newJob('page-down-'));
    await waitForAppliedCommit(c, namespace, 'shop', sha, 90_000);
    expect(await configMapData(c, namespace, 'backend')).toEqual({ release: 'v2' });
    // The first sync's Sync hook had no delete policy: it stays, beside this sync's, as in Argo CD.
    expect(await jobsNamed('page-up-')).toEqual([...before, pageUp].sort());
  });

  it('stops at a failed Sync hook before the next wave, and runs the SyncFail hook', async () => {
    await c.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      body: applySetBody(namespace, 'failing', { url: git.url, path: 'failing', interval: '1h' }),
    });
    await finishJob(batch, namespace, 'failing-check', 'Failed');
    const notify = await newJob('failing-notify-');
    await complete(notify);
    // The run ends failed, naming the hook. (Its retry replaces the Job, which then never finishes
    // here, so the events of the first run are what the test reads.)
    await waitForReady(
      c,
      namespace,
      'failing',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'HookFailed',
      90_000,
    );
    const events = (
      await c.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=failing' })
    ).items.map((event) => `${event.reason}: ${event.message}`);
    expect(events).toEqual(
      expect.arrayContaining([
        `HookFailed: Sync hook job.batch/failing-check -n ${namespace} failed: Failed: Job has failed: BackoffLimitExceeded`,
        `HookSucceeded: SyncFail hook job.batch/${notify} -n ${namespace} finished`,
      ]),
    );
    expect(await configMapData(c, namespace, 'failing-config')).toEqual({});
    expect(await serviceExists('failing-later')).toBe(false);
  });
});

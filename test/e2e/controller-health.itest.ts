import { kubectl as kubectlAdmin, markDeploymentRolledOut } from '../apply/apply-test-kit.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  createApplySet,
  getApplySet,
  httpGet,
  patchApplySet,
  waitFor,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';

// Issue #15 point 1 with the controller as its own process: with spec.wait, Ready means the objects are
// healthy by kstatus's rules, not only accepted. No workload controller runs here: the test writes the
// Deployment's status as the deployment controller would, and creates the object of a health check.

const deployment = (namespace: string) => `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${namespace} }
spec:
  replicas: 3
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx:1.27 }] }
`;

describe('spec.wait: Ready means healthy', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-health');
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'deploy.yaml': deployment(namespace),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('stays not Ready, naming the rollout and the missing health check, until both are healthy', async () => {
    await createApplySet(c, namespace, 'site', { url: git.url, interval: '1h', suspend: true });
    await patchApplySet(namespace, 'site', {
      spec: {
        suspend: false,
        wait: true,
        // Long enough that fetch and apply fit in it on a loaded machine: the wait is what must time out.
        timeout: '20s',
        healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'made-elsewhere', namespace }],
      },
    });
    // While the wait lasts the status says so: Ready Unknown, Progressing, naming what is not ready
    // (each attempt shows it for most of spec.timeout, so a slow poll still sees it), and the gauge is -1.
    const progressing = await waitForReady(
      c,
      namespace,
      'site',
      'Unknown',
      (view) => condition(view, 'Ready')?.reason === 'Progressing',
      120_000,
    );
    expect(condition(progressing, 'Ready')?.message).toBe(
      'waiting for deployment.apps/web: the Deployment has no status yet; ' +
        'configmap/made-elsewhere: the object does not exist',
    );
    expect(condition(progressing, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Progressing' });
    expect(progressing.status?.lastAttemptedRevision).toMatch(/^main@sha1:/);
    await waitFor(
      'applyset_ready -1 while progressing',
      async () => {
        const { body } = await httpGet(controller.port, '/metrics');
        return body.includes(`applyset_ready{namespace="${namespace}",name="site"} -1`) ? true : undefined;
      },
      120_000,
    );

    const waiting = await waitForReady(
      c,
      namespace,
      'site',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'HealthCheckFailed',
      120_000,
    );
    expect(condition(waiting, 'Ready')?.message).toMatch(
      /applied, but 2 object\(s\) not ready within spec.timeout/,
    );
    const errors = waiting.status?.errors?.items ?? [];
    expect(errors).toEqual(
      expect.arrayContaining([
        {
          object: `${namespace}:apps:Deployment:web`,
          message: 'InProgress: the Deployment has no status yet',
        },
        { object: `${namespace}::ConfigMap:made-elsewhere`, message: 'NotFound: the object does not exist' },
      ]),
    );

    // The rollout completes (as the deployment controller would write it) and the checked object appears.
    await markDeploymentRolledOut(namespace, 'web', 3);
    await kubectlAdmin(['-n', namespace, 'create', 'configmap', 'made-elsewhere']);
    const ready = await waitForReady(c, namespace, 'site', 'True', undefined, 120_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    expect((await getApplySet(c, namespace, 'site'))?.status?.errors?.totalCount).toBe(0);
  });
});

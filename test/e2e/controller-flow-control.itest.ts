import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import type { GitTestServer } from '../harness/git-server.js';
import { oneSeatFlow, type OneSeatFlow } from '../harness/flow-control.js';
import { startSlowAdmissionWebhook, type SlowAdmissionWebhook } from '../harness/slow-admission-webhook.js';
import { adminKubeConfig, uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { DEFAULT_DEPLOYER } from './default-deployer.js';
import { cluster, configMapData, configMapYaml, createApplySet, waitForAppliedCommit } from './e2e-kit.js';

// A busy API server turns requests away with 429 and Retry-After (API Priority and Fairness). Here the
// set's account gets one seat, which rejects rather than queues, and a webhook holds each ConfigMap
// write 300 ms: the set's four writes, sent at once, are turned away but one. The controller sends
// each again after the second the server names, so the first reconcile applies them all and the set
// becomes Ready without a failure in between.

const OBJECTS = 4;

describe('an ApplySet whose account API Priority and Fairness turns away', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-apf');
  let git: GitTestServer;
  let flow: OneSeatFlow | undefined;
  let webhook: SlowAdmissionWebhook | undefined;

  beforeAll(async () => {
    const files = Object.fromEntries(
      Array.from({ length: OBJECTS }, (_unused, i) => [
        `cm${i}.yaml`,
        configMapYaml(`cm${i}`, { i: `${i}` }),
      ]),
    );
    ({ git } = await startControllerWithRepository(c, namespace, files));
    const admin = createKubeClient({
      credentials: createKubeCredentials(adminKubeConfig()),
    });
    const account = createKubeClient({
      credentials: createKubeCredentials(adminKubeConfig()),
      impersonateUser: `system:serviceaccount:${namespace}:${DEFAULT_DEPLOYER}`,
    });
    flow = await oneSeatFlow(
      admin,
      namespace,
      { kind: 'ServiceAccount', serviceAccount: { namespace, name: DEFAULT_DEPLOYER } },
      () => account.request({ method: 'GET', path: `/api/v1/namespaces/${namespace}/configmaps` }),
    );
    webhook = await startSlowAdmissionWebhook({ namespace, delayMs: 300 });
  });

  afterAll(async () => {
    await webhook?.close();
    await flow?.remove();
    await stopControllersAndGit(git);
  });

  it('applies every object in its first reconcile, sending the turned-away writes again', async () => {
    await createApplySet(c, namespace, 'busy', { url: git.url });
    await waitForAppliedCommit(c, namespace, 'busy', await git.revParse('main'), 120_000);
    for (let i = 0; i < OBJECTS; i += 1) {
      expect(await configMapData(c, namespace, `cm${i}`)).toEqual({ i: `${i}` });
    }
    // The server did turn the account's requests away, and the set never showed a failure for it.
    expect(await flow?.counted('rejected')).toBeGreaterThan(0);
    const events = await c.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=busy' });
    expect(events.items.map((event) => `${event.type} ${event.reason}`)).toEqual([
      'Normal ReconciliationSucceeded',
    ]);
  }, 180_000);
});

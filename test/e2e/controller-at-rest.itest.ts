import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { kubeRequestsByVerb, writeTotal } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  httpGet,
  logCount,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { waitForReconciles } from './wait-for-reconciles.js';

// Issue #14: at rest, a fleet costs the API server reads only. An ApplySet whose revision and objects
// did not change is reconciled on its interval (drift is checked) and the controller sends no write:
// no PATCH of a child, no status PATCH, no event. Counted by the controller's own request counter.

const writes = async (controller: ControllerProcess) => writeTotal(await kubeRequestsByVerb(controller));

describe('an ApplySet at rest', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-rest');
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'a.yaml': configMapYaml('a', { v: '1' }),
      'b.yaml': configMapYaml('b', { v: '1' }),
      'c.yaml': configMapYaml('c', { v: '1' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('is reconciled on its interval without a single write', async () => {
    await createApplySet(c, namespace, 'rest', { url: git.url, interval: '2s' });
    await waitForAppliedCommit(c, namespace, 'rest', await git.revParse('main'), 60_000);
    const key = `${namespace}/rest`;
    // Let the first reconciles settle (the first one after Ready may still record its event).
    const settled = logCount(controller, key, 'reconciled') + 1;
    await waitForReconciles(controller, key, settled + 1, 'one more reconcile', 30_000);
    const before = await writes(controller);
    const reconciled = logCount(controller, key, 'reconciled');
    await waitForReconciles(controller, key, reconciled + 3, 'three reconciles on the interval', 30_000);
    expect(await writes(controller)).toBe(before);

    // Observable per ApplySet: the readiness gauge, and an event naming what the first run created.
    const { body } = await httpGet(controller.port, '/metrics');
    expect(body).toContain(`applyset_ready{namespace="${namespace}",name="rest"} 1`);
    const events = await c.core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=rest' });
    const created = events.items.find((event) => event.reason === 'ReconciliationSucceeded');
    expect(created?.message).toContain(
      `created configmap/a -n ${namespace}, configmap/b -n ${namespace}, configmap/c -n ${namespace}`,
    );
  });
});

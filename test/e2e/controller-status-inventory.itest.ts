import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  getApplySet,
  kubectl,
  waitFor,
  waitForAppliedCommit,
  type ApplySetView,
  type ControllerProcess,
} from './e2e-kit.js';
import { metricsLines } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { webDeploymentYaml } from './e2e-manifests.js';

// Issue #15, point 3: status names what the set holds (status.inventory, compact ids), the events name
// what changed, and the metrics carry each ApplySet's namespace, name and revision, gone with it.

const service = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - port: 80
`;

interface InventoryView {
  readonly items: string[];
  readonly totalCount: number;
  readonly truncated: boolean;
}

interface ManagedFieldsEntry {
  readonly manager: string;
  readonly subresource?: string;
  readonly fieldsV1: unknown;
}

const inventoryOf = (view: ApplySetView | undefined) =>
  (view?.status as { inventory?: InventoryView } | undefined)?.inventory;

/** The exposition lines that carry `name="inv"` of this test's namespace. */
async function seriesOf(controller: ControllerProcess, namespace: string): Promise<string[]> {
  return (await metricsLines(controller)).filter((line) =>
    line.includes(`namespace="${namespace}",name="inv"`),
  );
}

describe('status.inventory, the events and the metrics of one ApplySet', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-inv');
  /** Who manages which of an object's fields (`kubectl get --show-managed-fields`). */
  const managersOf = async (object: readonly string[]) => {
    const json = await kubectl(['-n', namespace, 'get', ...object, '-o', 'json', '--show-managed-fields']);
    return (JSON.parse(json) as { metadata: { managedFields: ManagedFieldsEntry[] } }).metadata.managedFields;
  };
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'a.yaml': configMapYaml('a', { v: '1' }),
      'old.yaml': configMapYaml('old', { v: '1' }),
      'service.yaml': service,
      'deployment.yaml': webDeploymentYaml,
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('lists what the set holds, names the pruned object, and labels the metrics with the revision', async () => {
    const first = await git.revParse('main');
    await createApplySet(c, namespace, 'inv', { url: git.url, interval: '3s' });
    const view = await waitForAppliedCommit(c, namespace, 'inv', first, 90_000);
    expect(inventoryOf(view)).toEqual({
      items: [
        `${namespace}_a__ConfigMap`,
        `${namespace}_old__ConfigMap`,
        `${namespace}_web__Service`,
        `${namespace}_web_apps_Deployment`,
      ],
      totalCount: 4,
      truncated: false,
    });
    // The annotation tools read stays; describe shows the readable list in status.
    expect(view.metadata.annotations?.['kubectl.kubernetes.io/last-applied-objects']).toContain(
      `${namespace}::ConfigMap:old`,
    );
    // The controller names itself (its User-Agent): the fields it wrote on the ApplySet (the inventory,
    // the status) are managed by applyset-controller, not `unknown`; what it applied stays kubectl's.
    const managers = await managersOf(['applyset', 'inv']);
    expect(managers.find((entry) => entry.subresource === 'status')?.manager).toBe('applyset-controller');
    const inventoryWriter = managers.find((entry) =>
      JSON.stringify(entry.fieldsV1).includes('f:kubectl.kubernetes.io/last-applied-objects'),
    );
    expect(inventoryWriter?.manager).toBe('applyset-controller');
    expect((await managersOf(['configmap', 'a'])).map((entry) => entry.manager)).toEqual([
      'kubectl-client-side-apply',
    ]);
    const described = await kubectl(['-n', namespace, 'describe', 'applyset', 'inv']);
    expect(described).toMatch(/Inventory:\s+Items:\s+\S+_a__ConfigMap/);
    expect(described).toMatch(/Total Count:\s+4/);

    const firstSeries = await waitFor(
      'the per-ApplySet series of the first revision',
      async () => {
        const lines = await seriesOf(controller, namespace);
        return lines.some((line) => line.startsWith('applyset_info')) ? lines : undefined;
      },
      60_000,
    );
    expect(firstSeries).toContain(
      `applyset_info{namespace="${namespace}",name="inv",revision="main@sha1:${first}"} 1`,
    );
    expect(firstSeries).toContain(
      `applyset_set_objects_total{namespace="${namespace}",name="inv",verb="created"} 4`,
    );
    expect(firstSeries).toContainEqual(
      expect.stringMatching(
        /^applyset_set_reconcile_duration_seconds_count\{namespace="[^"]+",name="inv",result="success"\} [1-9]/,
      ),
    );

    // A commit removes one manifest: the object is pruned, leaves status.inventory, the event names it.
    const second = await git.deleteFiles(['old.yaml']);
    const after = await waitForAppliedCommit(c, namespace, 'inv', second, 90_000);
    expect(inventoryOf(after)).toEqual({
      items: [`${namespace}_a__ConfigMap`, `${namespace}_web__Service`, `${namespace}_web_apps_Deployment`],
      totalCount: 3,
      truncated: false,
    });
    const pruneEvent = await waitFor(
      'the event of the second revision',
      async () => {
        const events = await c.core.listNamespacedEvent({
          namespace,
          fieldSelector: 'involvedObject.name=inv',
        });
        return events.items.find((event) => event.message?.includes(second) === true);
      },
      60_000,
    );
    expect(pruneEvent.reason).toBe('ReconciliationSucceeded');
    expect(pruneEvent.message).toContain(`1 pruned; pruned configmap/old -n ${namespace}`);

    const secondSeries = await waitFor(
      'the info series to carry the second revision',
      async () => {
        const lines = await seriesOf(controller, namespace);
        return lines.some((line) => line.includes(second)) ? lines : undefined;
      },
      60_000,
    );
    expect(secondSeries.filter((line) => line.startsWith('applyset_info'))).toEqual([
      `applyset_info{namespace="${namespace}",name="inv",revision="main@sha1:${second}"} 1`,
    ]);
    expect(secondSeries).toContain(
      `applyset_set_objects_total{namespace="${namespace}",name="inv",verb="pruned"} 1`,
    );
  });

  it('drops every series of the ApplySet once it is deleted', async () => {
    expect((await seriesOf(controller, namespace)).length).toBeGreaterThan(0);
    await kubectl(['-n', namespace, 'delete', 'applyset', 'inv', '--wait=false']);
    await waitFor(
      'the ApplySet to be gone',
      async () => ((await getApplySet(c, namespace, 'inv')) === undefined ? true : undefined),
      90_000,
    );
    let left: string[] = [];
    await waitFor(
      'its series to be gone from /metrics',
      async () => {
        left = await seriesOf(controller, namespace);
        return left.length === 0 ? true : undefined;
      },
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; still there: ${left.join('\n')}`);
    });
  });
});

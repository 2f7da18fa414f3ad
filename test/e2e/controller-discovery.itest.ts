import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { crdYaml, deleteCrds, installCrds } from '../harness/test-crds.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  kubectl,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';

// A custom resource whose CRD someone installs only after the controller refused it: the running
// controller must see the new kind on a later reconcile, without a restart.

describe('the controller and kinds installed after it started', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-disc');
  const group = `${uniqueName('late')}.example.com`;
  let git: GitTestServer | undefined;
  let controller: ControllerProcess;

  beforeAll(async () => {
    controller = await startControllerInNamespace(c, namespace);
  });

  afterAll(async () => {
    await stopControllersAndGit(git);
    await deleteCrds([`widgets.${group}`]);
  });

  it('stalls on a custom resource whose CRD is missing, and applies it once the CRD is installed', async () => {
    git = await startGitServer({
      files: {
        'cm.yaml': configMapYaml('plain', { k: 'v' }),
        'widget.yaml': `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 3\n`,
      },
    });
    await createApplySet(c, namespace, 'late-crd', { url: git.url, interval: '5s' });

    const stalled = await waitForReady(c, namespace, 'late-crd', 'False');
    expect(condition(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'UnknownKind' });
    expect(condition(stalled, 'Ready')?.message).toMatch(
      /widget\.yaml \(document 0\): widget\/w: .*no kind "Widget"/,
    );
    expect(stalled.status?.errors?.items.map((item) => item.object)).toEqual(['widget.yaml']);
    expect(await configMapData(c, namespace, 'plain')).toBeUndefined();

    await installCrds(crdYaml(group, 'Widget'));
    // The stalled ApplySet is polled at its interval (5 s); discovery's "no such kind" stands 10 s.
    const ready = await waitForReady(c, namespace, 'late-crd', 'True', undefined, 60_000);
    expect(condition(ready, 'Stalled')?.status).toBe('False');
    expect(await configMapData(c, namespace, 'plain')).toEqual({ k: 'v' });
    expect(
      await kubectl(['get', `widgets.${group}`, 'w', '-n', namespace, '-o', 'jsonpath={.spec.size}']),
    ).toBe('3');
    // The same process all along.
    expect(controller.child.exitCode).toBeNull();
    expect(controller.logs.filter((line) => line['msg'] === 'controller started')).toHaveLength(1);
  });
});

import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  getApplySet,
  waitFor,
  type ControllerProcess,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { assertAlive } from './process-health.js';

// Issue #26: two files kubectl refuses before writing anything (a DEL inside a quoted YAML string; a
// List item missing a required field) stall their ApplySet in kubectl's words, and nothing of the
// revision is written, not even the valid objects beside them. A message names the file from the
// repository root, as the user finds it there.

describe('the controller refuses what kubectl refuses before sending', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-refusals');
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'chars/beside.yaml': configMapYaml('beside-the-del', { k: 'v' }),
      'chars/del.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: del\ndata:\n  a: "x\u007fy"\n',
      'list/list.yaml': [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- {apiVersion: v1, kind: ConfigMap, metadata: {name: list-first}, data: {a: "1"}}',
        '- {apiVersion: v1, kind: LimitRange, metadata: {name: no-limits}, spec: {}}',
        '',
      ].join('\n'),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  const stalled = async (name: string) =>
    waitFor(`ApplySet ${namespace}/${name} Stalled`, async () => {
      assertAlive(controller);
      const current = await getApplySet(c, namespace, name);
      return condition(current, 'Stalled')?.status === 'True' ? current : undefined;
    });

  it('stalls on a control character, naming file, line and character, and writes nothing', async () => {
    await createApplySet(c, namespace, 'chars', { url: git.url, path: 'chars' });
    const view = await stalled('chars');
    expect(condition(view, 'Stalled')?.reason).toBe('InvalidManifests');
    expect(condition(view, 'Ready')?.message).toContain(
      'chars/del.yaml (document 0) line 6 column 8: control characters are not allowed (U+007F)',
    );
    expect(await configMapData(c, namespace, 'beside-the-del')).toBeUndefined();
    expect(await configMapData(c, namespace, 'del')).toBeUndefined();
  });

  it('stalls on a List item without a required field, in kubectl words, and writes nothing', async () => {
    await createApplySet(c, namespace, 'list', { url: git.url, path: 'list' });
    const view = await stalled('list');
    expect(condition(view, 'Ready')?.message).toContain(
      'ValidationError(LimitRange.spec): missing required field "limits" in io.k8s.api.core.v1.LimitRangeSpec',
    );
    expect(await configMapData(c, namespace, 'list-first')).toBeUndefined();
  });
});

import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  patchApplySet,
  waitForAppliedCommit,
  waitForReady,
} from './e2e-kit.js';

// Issue #15 point 5: spec.pruneLimit holds back a run that would prune more than the limit — a commit
// that empties a directory by mistake — until the revision is approved with an annotation.

describe('spec.pruneLimit', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-limit');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'a.yaml': configMapYaml('a', { v: '1' }),
      'b.yaml': configMapYaml('b', { v: '1' }),
      'c.yaml': configMapYaml('c', { v: '1' }),
      'd.yaml': configMapYaml('d', { v: '1' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('stalls a run that would prune past the limit, writing nothing, until the revision is approved', async () => {
    await createApplySet(c, namespace, 'site', { url: git.url, interval: '1h', suspend: true });
    await patchApplySet(namespace, 'site', { spec: { suspend: false, pruneLimit: '25%' } });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);

    // Two of four gone is 50%, over 25%; the change to a in the same commit waits too.
    await git.writeFiles({ 'a.yaml': configMapYaml('a', { v: '2' }) });
    const sha = await git.deleteFiles(['b.yaml', 'c.yaml']);
    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'limit' } },
    });
    const held = await waitForReady(
      c,
      namespace,
      'site',
      'False',
      (view) => condition(view, 'Ready')?.reason === 'PruneLimitExceeded',
      60_000,
    );
    expect(condition(held, 'Stalled')?.status).toBe('True');
    expect(condition(held, 'Ready')?.message).toContain('would prune 2 objects, over the prune limit of 1');
    expect(condition(held, 'Ready')?.message).toContain(`configmap/b -n ${namespace}`);
    expect(await configMapData(c, namespace, 'b')).toEqual({ v: '1' });
    expect(await configMapData(c, namespace, 'a')).toEqual({ v: '1' });

    await patchApplySet(namespace, 'site', {
      metadata: { annotations: { 'applyset.dev/approve-prune': `main@sha1:${sha}` } },
    });
    await waitForAppliedCommit(c, namespace, 'site', sha, 60_000);
    expect(await configMapData(c, namespace, 'b')).toBeUndefined();
    expect(await configMapData(c, namespace, 'c')).toBeUndefined();
    expect(await configMapData(c, namespace, 'a')).toEqual({ v: '2' });
  });
});

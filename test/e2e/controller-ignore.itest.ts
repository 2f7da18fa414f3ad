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

// Issue #13: spec.source.ignore keeps files out of an ApplySet (gitignore format, from the repository
// root), so a file that is not a manifest, or a broken one, neither breaks nor joins the set.

describe('spec.source.ignore', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-ignore');
  let git: GitTestServer;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, {
      'deploy/app.yaml': configMapYaml('app', { v: '1' }),
      'deploy/values.yaml': 'replicaCount: 3\nimage: { tag: latest }\n',
      'deploy/extra/more.yaml': configMapYaml('more', { v: '1' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('stalls on a file that is no manifest, then applies without it once ignored', async () => {
    await createApplySet(c, namespace, 'site', { url: git.url, path: 'deploy', interval: '1h' });
    const stalled = await waitForReady(c, namespace, 'site', 'False', undefined, 60_000);
    expect(condition(stalled, 'Ready')?.reason).toBe('InvalidManifests');
    expect(condition(stalled, 'Ready')?.message).toContain('values.yaml');
    await patchApplySet(namespace, 'site', {
      spec: { source: { ignore: '# helm values\n/deploy/values.yaml\nextra/\n' } },
    });
    await waitForAppliedCommit(c, namespace, 'site', await git.revParse('main'), 60_000);
    expect(await configMapData(c, namespace, 'app')).toEqual({ v: '1' });
    expect(await configMapData(c, namespace, 'more')).toBeUndefined();
  });
});

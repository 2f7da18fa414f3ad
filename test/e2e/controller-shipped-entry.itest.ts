import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { imageEnv, imageNodeFlags } from '../harness/image-runtime.js';
import { e2eRunsShippedBuild, shippedBuildKey } from '../harness/shipped-build.js';
import { uniqueName } from '../harness/test-cluster.js';
import { cluster, configMapData, configMapYaml, createApplySet, waitForReady } from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { repoRoot } from './controller-process.js';
import type { GitTestServer } from '../harness/git-server.js';

// What the e2e suites run is what the image runs: bin/applyset.js over dist/, with the Dockerfile's node
// flags and allocator, dist/ built from the sources as they are (global setup), and the controller
// reconciles with it.

describe('the e2e controller is the shipped entry point', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-shipped');
  let git: GitTestServer | undefined;

  afterAll(() => stopControllersAndGit(git));

  it('runs bin/applyset.js with the image flags over a dist/ built from the current sources', async () => {
    const started = await startControllerWithRepository(c, namespace, {
      'cm.yaml': configMapYaml('shipped', { k: 'v' }),
    });
    git = started.git;
    const argv = (await readFile(`/proc/${started.controller.child.pid}/cmdline`, 'utf8')).split('\0');
    const environ = (await readFile(`/proc/${started.controller.child.pid}/environ`, 'utf8')).split('\0');
    if (e2eRunsShippedBuild()) {
      expect(argv.slice(0, imageNodeFlags().length + 3)).toEqual([
        process.execPath,
        ...imageNodeFlags(),
        path.join(repoRoot, 'bin/applyset.js'),
        'controller',
      ]);
      // The image's allocator is the one loaded, not only named: ld.so skips a preload it cannot find.
      for (const [name, value] of Object.entries(imageEnv())) expect(environ).toContain(`${name}=${value}`);
      const maps = await readFile(`/proc/${started.controller.child.pid}/maps`, 'utf8');
      expect(maps).toMatch(/\/libjemalloc\.so\.2$/m);
      expect(await readFile(path.join(repoRoot, 'dist/.build-key'), 'utf8')).toBe(await shippedBuildKey());
    } else {
      expect(argv.slice(1, 3)).toEqual(['--import', 'tsx']);
    }

    await createApplySet(c, namespace, 'shipped', { url: git.url });
    await waitForReady(c, namespace, 'shipped', 'True');
    expect(await configMapData(c, namespace, 'shipped')).toEqual({ k: 'v' });
  });
});

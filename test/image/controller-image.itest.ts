// The controller's image as users run it: built from the repository's Dockerfile (on a base made from
// Debian's packages, scripts/build-image.sh) and run the way the chart runs it, as its numeric non-root
// user on a read-only root filesystem. The controller test runs the image's own ENTRYPOINT against the
// test control plane, so broken node flags there fail it.
import { readFileSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionDeployer } from '../e2e/default-deployer.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  waitFor,
  waitForReady,
} from '../e2e/e2e-kit.js';
import { controllerImage, type ControllerImage } from '../harness/controller-image.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { imageNodeFlags } from '../harness/image-runtime.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { CHART_LIKE_RUN, docker } from './docker-run.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** The kustomize release scripts/build-kustomize.sh pins: the image must ship the same one. */
const kustomizeVersion = /version=\$\{KUSTOMIZE_VERSION:-(v[0-9.]+)\}/.exec(
  readFileSync(new URL('../../scripts/build-kustomize.sh', import.meta.url), 'utf8'),
)?.[1];

/** The helm release scripts/build-helm.sh pins: the image must ship the same one. */
const helmVersion = /version=\$\{HELM_VERSION:-(v[0-9.]+)\}/.exec(
  readFileSync(new URL('../../scripts/build-helm.sh', import.meta.url), 'utf8'),
)?.[1];

let image: ControllerImage;

beforeAll(async () => {
  // A warm cache (CI builds the image in a step of its own first) makes this seconds.
  image = await controllerImage();
}, 20 * 60_000);

/** Runs node with `args` in the image as the chart would, bypassing the ENTRYPOINT. */
function nodeRunInImage(args: readonly string[]) {
  return docker(['run', '--rm', ...CHART_LIKE_RUN, '--entrypoint', 'node', image.reference, ...args]);
}

/** Runs `node -e script` in the image as the chart would, bypassing the ENTRYPOINT. */
async function nodeInImage(script: string): Promise<string> {
  const run = await nodeRunInImage(['-e', script]);
  if (run.code !== 0) throw new Error(`node in the image exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

test('the image runs as uid and gid 65532, named by number so the kubelet can check runAsNonRoot', async () => {
  const inspect = await docker(['image', 'inspect', '--format', '{{.Config.User}}', image.reference]);
  expect(inspect.stdout.trim()).toBe('65532:65532');
  const ids = JSON.parse(
    await nodeInImage('console.log(JSON.stringify([process.getuid(), process.getgid()]))'),
  );
  expect(ids).toEqual([65532, 65532]);
});

test('on a read-only root filesystem only the mounted Git cache and /tmp can be written', async () => {
  const outcome = JSON.parse(
    await nodeInImage(`
      const fs = require('node:fs');
      const attempt = (path) => { try { fs.writeFileSync(path, 'x'); return 'written'; } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        app: attempt('/app/dist/planted.js'),
        root: attempt('/planted'),
        cache: attempt(process.env.APPLYSET_GIT_CACHE_DIR + '/probe'),
        tmp: attempt('/tmp/probe'),
      }));`),
  );
  expect(outcome).toEqual({ app: 'EROFS', root: 'EROFS', cache: 'written', tmp: 'written' });
});

test("the image's node_modules hold the production dependencies and none of the development ones", async () => {
  // The lock file, copied into the image, marks what only development needs ("dev": true).
  const found = JSON.parse(
    await nodeInImage(`
      const fs = require('node:fs');
      const lock = JSON.parse(fs.readFileSync('/app/package-lock.json', 'utf8'));
      const present = (path) => fs.existsSync('/app/' + path);
      const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
      console.log(JSON.stringify({
        devPresent: entries.filter(([path, p]) => p.dev && present(path)).map(([path]) => path),
        prodMissing: entries
          .filter(([path, p]) => !p.dev && !p.devOptional && !p.optional && !present(path))
          .map(([path]) => path),
        prodCount: entries.filter(([path, p]) => !p.dev && present(path)).length,
        topLevel: fs.readdirSync('/app/node_modules'),
      }));`),
  );
  expect(found.devPresent).toEqual([]);
  expect(found.prodMissing).toEqual([]);
  expect(found.prodCount).toBeGreaterThan(0);
  for (const tool of ['typescript', 'jest', 'eslint', 'tsx', 'ts-jest', 'prettier'])
    expect(found.topLevel).not.toContain(tool);
});

test('`applyset --version` answers from the image', async () => {
  const run = await nodeRunInImage(['bin/applyset.js', '--version']);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: `applyset ${pkg.version}\n` });
});

test('`kustomize version` runs in the image as uid 65532, the pinned release the controller builds with', async () => {
  const run = await docker([
    'run',
    '--rm',
    ...CHART_LIKE_RUN,
    '--entrypoint',
    '/bin/sh',
    image.reference,
    '-c',
    'echo "$(id -u):$(id -g) $(command -v kustomize)" && kustomize version',
  ]);
  expect({ code: run.code, stdout: run.stdout }).toEqual({
    code: 0,
    stdout: `65532:65532 /usr/local/bin/kustomize\n${kustomizeVersion}\n`,
  });
});

test('`helm version` runs in the image as uid 65532, the pinned release the tests render with', async () => {
  const run = await docker([
    'run',
    '--rm',
    ...CHART_LIKE_RUN,
    '--entrypoint',
    '/bin/sh',
    image.reference,
    '-c',
    'echo "$(id -u):$(id -g) $(command -v helm)" && helm version --template "{{ .Version }}"',
  ]);
  expect({ code: run.code, stdout: run.stdout }).toEqual({
    code: 0,
    stdout: `65532:65532 /usr/local/bin/helm\n${helmVersion}`,
  });
});

test("`controller --help` answers through the image's ENTRYPOINT", async () => {
  const run = await docker(['run', '--rm', ...CHART_LIKE_RUN, image.reference, '--help']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/^usage: applyset controller /);
});

describe('the controller run by the image', () => {
  const c = cluster();
  const namespace = uniqueName('image');
  const name = uniqueName('applyset-image-controller');
  const args = [
    '--kubeconfig',
    '/etc/applyset/kubeconfig',
    '--metrics-addr',
    '127.0.0.1:0',
    '--namespace',
    namespace,
    // The harness's Git server listens on loopback, which the controller refuses unless allowed.
    '--allowed-source-hosts',
    '127.0.0.1',
  ];
  let kubeconfigDir: string;
  let git: GitTestServer | undefined;
  let startup: { port: number } | { stopped: string };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    await provisionDeployer(namespace);
    git = await startGitServer({
      files: { 'app/settings.yaml': configMapYaml('settings', { color: 'blue' }) },
    });
    // The controller runs as uid 65532: it gets a copy of the admin kubeconfig it may read.
    kubeconfigDir = await mkdtemp(join(tmpdir(), 'applyset-image-'));
    await copyFile(adminKubeconfigPath(), join(kubeconfigDir, 'kubeconfig'));
    await chmod(join(kubeconfigDir, 'kubeconfig'), 0o644);
    const started = await docker([
      'run',
      '--detach',
      '--name',
      name,
      ...CHART_LIKE_RUN,
      // The test control plane and the Git server listen on the host's loopback.
      '--network',
      'host',
      '--volume',
      `${join(kubeconfigDir, 'kubeconfig')}:/etc/applyset/kubeconfig:ro`,
      image.reference,
      ...args,
    ]);
    if (started.code !== 0) throw new Error(`docker run failed: ${started.stderr}`);
    // A container that stopped ends the wait at once, with node's own words as the failure.
    startup = await waitFor(
      'the controller in the image to start',
      async () => {
        const logs = await docker(['logs', name]);
        const state = await docker(['inspect', '--format', '{{.State.Running}}', name]);
        if (state.stdout.trim() !== 'true') return { stopped: `${logs.stdout}${logs.stderr}` };
        const line = logs.stdout
          .split('\n')
          .flatMap((text) => (text.startsWith('{') ? [JSON.parse(text) as Record<string, unknown>] : []))
          .find((entry) => entry['msg'] === 'controller started');
        return typeof line?.['port'] === 'number' ? { port: line['port'] } : undefined;
      },
      60_000,
    );
  });

  afterAll(async () => {
    await docker(['rm', '--force', name]);
    await git?.close();
    await rm(kubeconfigDir, { recursive: true, force: true });
  });

  test("runs under the ENTRYPOINT's node flags, which node accepts, and jemalloc, and serves its probes", async () => {
    expect(startup).toEqual({ port: expect.any(Number) });
    const { port } = startup as { port: number };
    const cmdline = await docker(['exec', name, 'cat', '/proc/1/cmdline']);
    expect(cmdline.stdout.split('\0').filter((arg) => arg !== '')).toEqual([
      'node',
      ...imageNodeFlags(),
      'bin/applyset.js',
      'controller',
      ...args,
    ]);
    // Node says nothing when it takes every flag; a flag it does not know stops it before the controller.
    // ld.so would say it here too if the allocator the image preloads were missing.
    expect((await docker(['logs', name])).stderr).toBe('');
    const maps = await docker(['exec', name, 'cat', '/proc/1/maps']);
    expect(maps.stdout).toMatch(/\/libjemalloc\.so\.2$/m);
    const ready = await waitFor('/readyz to answer 200', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      return response.status === 200 ? response.status : undefined;
    });
    expect(ready).toBe(200);
  });

  test('reconciles an ApplySet from Git with nothing but its production dependencies', async () => {
    expect(startup).toEqual({ port: expect.any(Number) });
    await createApplySet(c, namespace, 'app', { url: git?.url ?? '', path: 'app' });
    const view = await waitForReady(c, namespace, 'app', 'True');
    expect(view.status?.lastAppliedRevision).toBe(`main@sha1:${await git?.revParse('main')}`);
    expect(await configMapData(c, namespace, 'settings')).toEqual({ color: 'blue' });
  });
});

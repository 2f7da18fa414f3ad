import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  configMapData,
  condition,
  configMapYaml,
  getApplySet,
  installCrd,
  kubectlApply,
  stopAllControllers,
  waitFor,
  waitForReady,
  type ApplySetOptions,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Issue #33, finding 6 (the build door): one tenant's heavy kustomize builds must not keep another
// tenant's plain ApplySet from becoming Ready. Builds used to run one at a time, and a reconcile worker
// waited for the build slot holding its worker, so a tenant with more heavy ApplySets than the
// controller has workers held every worker: the plain ApplySet queued behind builds it does not need.
// The controller runs with the chart's RBAC and watches both tenants.

const execFileAsync = promisify(execFile);

/** The heavy tenant's ApplySets: more than the chart's four workers. */
const HEAVY_SETS = 8;
/** JSON patches per kustomization: each build takes seconds on a loaded 2-core machine. */
const PATCHES = 1500;
const CONFIG_MAPS = 10;
/** The plain ApplySet's deadline, far below the heavy builds' total time (asserted below). */
const PLAIN_DEADLINE_MS = 15_000;

/** A kustomization of CONFIG_MAPS ConfigMaps and PATCHES JSON patches: cheap to apply, slow to build. */
function heavyKustomization(prefix: string): Record<string, string> {
  const configMaps = Array.from({ length: CONFIG_MAPS }, (_, index) =>
    configMapYaml(`${prefix}-${index}`, { seed: 'x' }),
  ).join('---\n');
  const patches = Array.from({ length: PATCHES }, (_, index) => {
    const target = `${prefix}-${index % CONFIG_MAPS}`;
    const op = `[{"op": "add", "path": "/data/k${index}", "value": "v"}]`;
    return `- target: {kind: ConfigMap, name: ${target}}\n  patch: '${op}'\n`;
  }).join('');
  return {
    [`${prefix}/configmaps.yaml`]: configMaps,
    [`${prefix}/kustomization.yaml`]: `resources: [configmaps.yaml]\npatches:\n${patches}`,
  };
}

/** Whether a kustomize process runs below `pid` (the controller), whichever code schedules it. */
async function buildRunningUnder(pid: number): Promise<boolean> {
  const { stdout } = await execFileAsync('ps', ['-eo', 'pid=,ppid=,args=']);
  const rows = stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, child, parent, args]) => ({ pid: Number(child), ppid: Number(parent), args: args ?? '' }));
  const below = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.ppid) && !below.has(row.pid)) {
        below.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.some((row) => below.has(row.pid) && /kustomize\S*\s+build/.test(row.args));
}

describe('the build door: one tenant of heavy builds and another of plain ApplySets', () => {
  const c = cluster();
  const shard = uniqueName('bld');
  const heavy = uniqueName('e2e-build-heavy');
  const plain = uniqueName('e2e-build-plain');
  let git: GitTestServer;
  let lockedDown: LockedDownController | undefined;

  const createLabelledApplySet = (namespace: string, name: string, options: ApplySetOptions) => {
    const body = applySetBody(namespace, name, options) as { metadata: Record<string, unknown> };
    body.metadata['labels'] = { 'applyset.dev/e2e-shard': shard };
    return JSON.stringify(body);
  };

  beforeAll(async () => {
    await installCrd();
    for (const namespace of [heavy, plain]) {
      await c.core.createNamespace({ body: { metadata: { name: namespace } } });
      await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [coreRule('configmaps')]);
    }
    const files: Record<string, string> = { 'plain/cm.yaml': configMapYaml('plain', { k: 'v' }) };
    for (let index = 0; index < HEAVY_SETS; index += 1)
      Object.assign(files, heavyKustomization(`heavy-${index}`));
    git = await startGitServer({ files });
    lockedDown = await startLockedDownController({
      namespace: undefined,
      values: { watchLabelSelector: `applyset.dev/e2e-shard in (${shard})` },
      args: ['--kustomize-binary', await kustomizeBinary()],
    });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await git?.close();
    await lockedDown?.cleanup();
  });

  it('makes the plain ApplySet Ready within its deadline while the heavy builds run', async () => {
    const controller = (lockedDown as LockedDownController).process;
    const pid = controller.child.pid;
    if (pid === undefined) throw new Error('the controller has no pid');
    // An interval long enough that a build's time limit (half of it, at most --kustomize-timeout) is
    // not what this test measures.
    await kubectlApply(
      Array.from({ length: HEAVY_SETS }, (_, index) =>
        createLabelledApplySet(heavy, `heavy-${index}`, {
          url: git.url,
          path: `heavy-${index}`,
          interval: '10m',
        }),
      ).join('\n'),
    );
    await waitFor(
      'a heavy build running',
      async () => ((await buildRunningUnder(pid)) ? true : undefined),
      60_000,
    );

    await kubectlApply(
      createLabelledApplySet(plain, 'plain', { url: git.url, path: 'plain', interval: '10m' }),
    );
    try {
      await waitForReady(c, plain, 'plain', 'True', () => true, PLAIN_DEADLINE_MS);
    } catch (error) {
      const key = `${plain}/plain`;
      const said = controller.logs
        .filter((line) => line['applyset'] === key)
        .map((line) => `${String(line['time'])} ${String(line['msg'])}`);
      throw new Error(`${String(error)}; the controller logged of ${key}:\n${said.join('\n')}`);
    }
    expect(await configMapData(c, plain, 'plain')).toEqual({ k: 'v' });
    // When the plain ApplySet was Ready, the heavy ones were still being built: it did not merely come
    // after builds that happened to be quick.
    const heavyReady = await Promise.all(
      Array.from({ length: HEAVY_SETS }, async (_, index) => {
        const view = await getApplySet(c, heavy, `heavy-${index}`);
        return condition(view, 'Ready')?.status === 'True';
      }),
    );
    expect(heavyReady.filter(Boolean).length).toBeLessThan(HEAVY_SETS);

    // Every heavy ApplySet is built and applied in the end.
    for (let index = 0; index < HEAVY_SETS; index += 1) {
      await waitForReady(c, heavy, `heavy-${index}`, 'True', () => true, 120_000);
    }
    expect((await configMapData(c, heavy, 'heavy-0-0'))?.['k0']).toBe('v');
  }, 240_000);
});

import { execFile } from 'node:child_process';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  getApplySet,
  kubectl,
  patchApplySet,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { metricsLines } from './controller-metrics.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';

// Issue #15 point 5, the safe modes: spec.prune DryRun, driftMode Warn, driftIgnore and fight
// detection, with the controller as its own process, a real Git server and a third party changing
// the objects with kubectl.

describe('safe modes', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-safe');
  const servers = new GitServerPool();
  let controller: ControllerProcess;

  const serve = (files: Record<string, string>) => servers.start({ files });

  /** Creates an ApplySet on `git` with the given spec fields over the kit's defaults (interval 2s). */
  const create = async (name: string, git: GitTestServer, spec: Record<string, unknown>) => {
    await createApplySetWithSpec(c, namespace, name, { url: git.url, interval: '2s' }, spec);
    return waitForAppliedCommit(c, namespace, name, await git.revParse('main'), 60_000);
  };

  const eventsOf = async (name: string, reason: string) =>
    (await c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items
      .filter((event) => event.reason === reason)
      .map((event) => ({ type: event.type, message: event.message ?? '' }));

  /** A third party's change, as someone with kubectl would make it. */
  const setData = (name: string, data: Record<string, string>) =>
    kubectl(['-n', namespace, 'patch', 'configmap', name, '--type', 'merge', '-p', JSON.stringify({ data })]);

  const metric = async (metricName: string, name: string): Promise<number> => {
    const line = (await metricsLines(controller)).find(
      (l) =>
        l.startsWith(`${metricName}{`) &&
        l.includes(`namespace="${namespace}"`) &&
        l.includes(`name="${name}"`),
    );
    return line === undefined ? 0 : Number(line.split(' ').pop());
  };

  beforeAll(async () => {
    controller = await startControllerInNamespace(c, namespace);
  });

  afterAll(() => stopControllersAndGit(servers));

  it('admits spec.prune true, false and DryRun, and refuses "maybe" and "true"', async () => {
    const admitted = async (prune: unknown) => {
      const body = applySetBody(namespace, 'admission', { url: 'https://git.example/r.git' });
      const manifest = JSON.stringify({ ...body, spec: { ...(body['spec'] as object), prune } });
      return serverDryRun(manifest).then(
        () => 'admitted',
        (error: Error) => error.message,
      );
    };
    expect(await admitted(true)).toBe('admitted');
    expect(await admitted(false)).toBe('admitted');
    expect(await admitted('DryRun')).toBe('admitted');
    expect(await admitted('maybe')).toContain('spec.prune: Unsupported value: "maybe"');
    expect(await admitted('true')).toContain('spec.prune: Unsupported value: "true"');
  });

  it('prune DryRun lists what would be pruned, deletes nothing and keeps it in the inventory', async () => {
    const git = await serve({
      'a.yaml': configMapYaml('a', { v: '1' }),
      'b.yaml': configMapYaml('b', { v: '1' }),
    });
    await create('dry', git, { prune: 'DryRun' });
    const sha = await git.deleteFiles(['b.yaml']);
    const view = await waitForAppliedCommit(c, namespace, 'dry', sha, 60_000);
    const key = `${namespace}::ConfigMap:b`;
    expect((view.status as Record<string, unknown>)['wouldPrune']).toEqual({
      items: [{ object: key, message: expect.stringContaining('would be pruned') }],
      totalCount: 1,
      truncated: false,
    });
    expect(await configMapData(c, namespace, 'b')).toEqual({ v: '1' });
    // Still in the set's inventory (the last-applied-objects annotation), so a later prune finds it.
    const inventory = view.metadata.annotations?.['kubectl.kubernetes.io/last-applied-objects'] ?? '';
    expect(inventory.split('\n')).toContain(`${namespace}::ConfigMap:b`);
    const events = await waitFor('the PruneDryRun event', async () => {
      const found = await eventsOf('dry', 'PruneDryRun');
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.message).toContain(`configmap/b -n ${namespace}`);

    // Turning prune on prunes what the dry run listed, and clears the list.
    await patchApplySet(namespace, 'dry', { spec: { prune: true } });
    await waitFor('b to be pruned', async () =>
      (await configMapData(c, namespace, 'b')) === undefined ? true : undefined,
    );
    await waitFor('status.wouldPrune to be cleared', async () => {
      const status = (await getApplySet(c, namespace, 'dry'))?.status as Record<string, unknown> | undefined;
      return status !== undefined && !('wouldPrune' in status) ? true : undefined;
    });
  });

  it('driftMode Warn reports drift without correcting it, never an ignored field, and applies a new revision', async () => {
    const git = await serve({ 'w.yaml': configMapYaml('w', { v: '1', replicas: '1' }) });
    await create('warn', git, {
      driftMode: 'Warn',
      driftIgnore: [{ paths: ['/data/replicas'], target: { kind: 'ConfigMap', name: 'w' } }],
    });
    await setData('w', { v: 'theirs', replicas: '7' });

    const drifted = await waitFor(
      'Drifted=True',
      async () => {
        const view = await getApplySet(c, namespace, 'warn');
        return condition(view, 'Drifted')?.status === 'True' ? view : undefined;
      },
      60_000,
    );
    const key = `${namespace}::ConfigMap:w`;
    expect(condition(drifted, 'Drifted')?.message).toContain(`${key}: data.v`);
    expect(condition(drifted, 'Drifted')?.message).not.toContain('replicas');
    expect(condition(drifted, 'Ready')?.status).toBe('True');
    expect((drifted.status as Record<string, unknown>)['drift']).toEqual({
      items: [{ object: key, message: 'changed: data.v' }],
      totalCount: 1,
      truncated: false,
    });
    // Not corrected, on this run nor the next ones.
    const runs = controller.logs.filter(
      (l) => l['applyset'] === `${namespace}/warn` && l['msg'] === 'reconciled',
    ).length;
    await waitFor('two more runs', async () =>
      controller.logs.filter((l) => l['applyset'] === `${namespace}/warn` && l['msg'] === 'reconciled')
        .length >=
      runs + 2
        ? true
        : undefined,
    );
    expect(await configMapData(c, namespace, 'w')).toEqual({ v: 'theirs', replicas: '7' });
    const events = await eventsOf('warn', 'DriftDetected');
    expect(events).toEqual([{ type: 'Warning', message: expect.stringContaining(`${key}: data.v`) }]);
    expect(await metric('applyset_drift_total', 'warn')).toBeGreaterThanOrEqual(1);

    // A new revision is applied in full (data.v back to Git's), the ignored field excepted.
    const sha = await git.writeFiles({ 'w.yaml': configMapYaml('w', { v: '2', replicas: '1' }) });
    const applied = await waitForAppliedCommit(c, namespace, 'warn', sha, 60_000);
    expect(await configMapData(c, namespace, 'w')).toEqual({ v: '2', replicas: '7' });
    expect(condition(applied, 'Drifted')?.status).toBe('False');
  });

  it('driftIgnore leaves an ignored field others changed, corrects the rest, and applies a change from Git', async () => {
    const git = await serve({ 'i.yaml': configMapYaml('i', { replicas: '1', other: 'o' }) });
    await create('ignore', git, { driftIgnore: [{ paths: ['/data/replicas'] }] });
    await setData('i', { replicas: '5', other: 'x' });
    await waitFor(
      'data.other to be corrected',
      async () => ((await configMapData(c, namespace, 'i'))?.['other'] === 'o' ? true : undefined),
      60_000,
    );
    expect(await configMapData(c, namespace, 'i')).toEqual({ replicas: '5', other: 'o' });

    const sha = await git.writeFiles({ 'i.yaml': configMapYaml('i', { replicas: '3', other: 'o' }) });
    await waitForAppliedCommit(c, namespace, 'ignore', sha, 60_000);
    expect(await configMapData(c, namespace, 'i')).toEqual({ replicas: '3', other: 'o' });
  });

  it('sets Fighting when an object is corrected on three runs in a row, and clears it once left alone', async () => {
    const git = await serve({ 'f.yaml': configMapYaml('f', { v: 'ours' }) });
    await create('fight', git, {});
    const key = `${namespace}::ConfigMap:f`;
    // The other writer puts its value back whenever the controller has corrected it.
    const fighting = await waitFor(
      'Fighting=True',
      async () => {
        if ((await configMapData(c, namespace, 'f'))?.['v'] === 'ours') await setData('f', { v: 'theirs' });
        const view = await getApplySet(c, namespace, 'fight');
        return condition(view, 'Fighting')?.status === 'True' ? view : undefined;
      },
      90_000,
    );
    expect(condition(fighting, 'Fighting')?.message).toContain(`${key}: data.v`);
    const events = await eventsOf('fight', 'Fighting');
    expect(events).toEqual([{ type: 'Warning', message: expect.stringContaining(`${key}: data.v`) }]);
    expect(await metric('applyset_fights_total', 'fight')).toBe(1);

    // Left alone: a run corrects nothing, and the fight is over.
    const over = await waitFor(
      'Fighting=False',
      async () => {
        const view = await getApplySet(c, namespace, 'fight');
        return condition(view, 'Fighting')?.status === 'False' ? view : undefined;
      },
      60_000,
    );
    expect(condition(over, 'Fighting')?.reason).toBe('NoFight');
    expect(await configMapData(c, namespace, 'f')).toEqual({ v: 'ours' });
  });
});

/** `kubectl apply --dry-run=server`: the API server's admission, schema included, and nothing stored. */
function serverDryRun(manifest: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', adminKubeconfigPath(), 'apply', '--dry-run=server', '-f', '-'],
      (error, _stdout, stderr) => (error === null ? resolve() : reject(new Error(stderr))),
    );
    child.stdin?.end(manifest);
  });
}

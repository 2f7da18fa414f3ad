import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  getApplySet,
  installCrd,
  patchApplySet,
  repoRoot,
  startController,
  waitFor,
  waitForAppliedCommit,
  type ControllerProcess,
} from './e2e-kit.js';
import { stopControllersAndGit } from './controller-testbed.js';
import { GitServerPool } from './git-server-pool.js';

// Split brain after a failover, played for real: two replicas elect a leader; the leader is frozen
// with SIGSTOP right after one step of a reconcile that adds and removes objects; the other replica
// takes the Lease and applies a newer commit; then the frozen one is resumed. Whatever step it was
// frozen after, it must write nothing more: no object re-created, no inventory or hash written from
// its stale plan, no status with a stale revision. Afterwards every object that names the set as its
// owner is in the inventory, so nothing is left that no one would ever prune.

const LEASE = 'applyset-controller-leader';
const entry = path.join(repoRoot, 'test/e2e/paused-controller-entry.ts');
const INVENTORY = 'kubectl.kubernetes.io/last-applied-objects';
const OWNER = 'kubectl.kubernetes.io/apply-owner';

describe('a leader frozen mid-reconcile and resumed after a failover', () => {
  const c = cluster();
  const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
  const servers = new GitServerPool();
  const dirs: string[] = [];

  beforeAll(async () => {
    await installCrd();
  });

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  const holder = async (namespace: string) => {
    try {
      return (await coordination.readNamespacedLease({ namespace, name: LEASE })).spec?.holderIdentity;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  };

  const ownedConfigMaps = async (namespace: string, uid: string) => {
    const list = await c.core.listNamespacedConfigMap({ namespace });
    return list.items
      .filter((item) => item.metadata?.annotations?.[OWNER] === uid)
      .map((item) => item.metadata?.name ?? '')
      .sort();
  };

  it.each(['widen-inventory', 'apply-wave', 'prune-wave', 'narrow-inventory', 'write-hash'])(
    'frozen after %s: the resumed replica writes nothing and leaves no unowned object',
    async (step) => {
      const namespace = uniqueName('e2e-split');
      await createNamespace(c.kc, namespace);
      const pauseDir = await mkdtemp(path.join(tmpdir(), 'applyset-split-'));
      dirs.push(pauseDir);
      const git = await servers.start({
        files: { 'a.yaml': configMapYaml('a', { v: '0' }), 'b.yaml': configMapYaml('b', { v: '0' }) },
      });
      const replica = (name: string) =>
        startController({
          namespace,
          entry,
          // The fence must hold for a renew deadline; 3 s leaves room for a loaded machine.
          args: [
            '--leader-elect',
            '--lease-duration',
            '4s',
            '--renew-deadline',
            '3s',
            '--retry-period',
            '500ms',
          ],
          env: {
            POD_NAME: name,
            POD_NAMESPACE: namespace,
            APPLYSET_E2E_PAUSE_DIR: pauseDir,
            APPLYSET_E2E_PAUSE_AT_STEP: step,
          },
        });
      const replicas: Record<string, ControllerProcess> = {
        'replica-a': await replica('replica-a'),
        'replica-b': await replica('replica-b'),
      };
      await createApplySet(c, namespace, 'set', { url: git.url, interval: '1h' });
      await waitForAppliedCommit(c, namespace, 'set', await git.revParse('main'), 60_000);
      const uid = ((await getApplySet(c, namespace, 'set')) as unknown as { metadata: { uid: string } })
        .metadata.uid;

      // Revision 1 keeps b, removes a and adds c: the leader freezes after `step` of it.
      await writeFile(path.join(pauseDir, 'armed'), '');
      await git.writeFiles({ 'c.yaml': configMapYaml('c', { v: '1' }) });
      const revision1 = await git.deleteFiles(['a.yaml']);
      await patchApplySet(namespace, 'set', {
        metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'revision-1' } },
      });
      const pausedPid = await waitFor(
        `a replica to freeze after ${step}`,
        async () =>
          existsSync(path.join(pauseDir, 'paused'))
            ? Number(await readFile(path.join(pauseDir, 'paused'), 'utf8'))
            : undefined,
        60_000,
      );
      const frozen = Object.entries(replicas).find(([, p]) => p.child.pid === pausedPid);
      expect(frozen).toBeDefined();
      const [frozenName, frozenProcess] = frozen as [string, ControllerProcess];
      const otherName = frozenName === 'replica-a' ? 'replica-b' : 'replica-a';

      // Meanwhile the other replica takes over and applies revision 2: b and d, nothing else.
      await git.writeFiles({ 'd.yaml': configMapYaml('d', { v: '2' }) });
      const revision2 = await git.deleteFiles(['c.yaml']);
      expect(revision2).not.toBe(revision1);
      await waitFor('the other replica to take the Lease', async () =>
        (await holder(namespace)) === otherName ? true : undefined,
      );
      await patchApplySet(namespace, 'set', {
        metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'revision-2' } },
      });
      await waitForAppliedCommit(c, namespace, 'set', revision2, 60_000);
      const settled = await getApplySet(c, namespace, 'set');

      // Resumed, the stale leader finds it lost the Lease and ends without another write.
      frozenProcess.child.kill('SIGCONT');
      expect(await frozenProcess.exited).toBe(3);
      expect(frozenProcess.logs.some((line) => String(line['msg']).startsWith('lost the leadership'))).toBe(
        true,
      );

      const after = await getApplySet(c, namespace, 'set');
      expect(after?.status?.lastAppliedRevision).toBe(`main@sha1:${revision2}`);
      expect(after?.metadata.annotations?.[INVENTORY]).toBe(settled?.metadata.annotations?.[INVENTORY]);
      expect(after?.metadata.annotations?.[INVENTORY]?.split('\n')).toEqual([
        `${namespace}::ConfigMap:b`,
        `${namespace}::ConfigMap:d`,
      ]);
      // Nothing names the set as its owner outside the inventory: c was not re-created, a not revived.
      expect(await ownedConfigMaps(namespace, uid)).toEqual(['b', 'd']);
      const names = (await c.core.listNamespacedConfigMap({ namespace })).items.map((i) => i.metadata?.name);
      expect(names).not.toContain('c');
      expect(names).not.toContain('a');
      await replicas[otherName]?.stop();
    },
    240_000,
  );
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { annotations, configMapYaml, kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { applyInNamespace, liveConfigMap } from './apply-in-namespace.js';
import { freshNamespace } from './cli-test-kit.js';

// A run that is refused before anything is applied (input that does not decode, an empty set, a set
// whose every object belongs to another set) leaves no parent behind: no empty apply-config
// ConfigMap named after the set, which would otherwise claim the name for nothing.

/** What the real kubectl says about the set's parent: it must not exist. */
async function expectNoParent(namespace: string, name: string): Promise<void> {
  const found = await kubectl(['get', 'configmap', name, '-n', namespace, '-o', 'name']).then(
    ({ stdout }) => stdout,
    (error: { stderr?: string }) => error.stderr ?? String(error),
  );
  expect(found).toMatch(/NotFound/);
  expect(await liveConfigMap(namespace, name)).toBeUndefined();
}

describe('a refused applyset apply', () => {
  // An empty directory is no set directory of the kit (those hold at least one file).
  const emptyDirs: string[] = [];
  afterAll(async () => {
    await Promise.all(emptyDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('creates no parent when a file does not decode', async () => {
    const ns = await freshNamespace('cli-refused');
    const dir = await writeSetDirectory({
      'good.yaml': configMapYaml(ns, 'good', { x: '1' }),
      'bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n',
    });
    for (const flags of [[], ['--prune']]) {
      const run = await applyInNamespace(ns, dir, 'refused-yaml', ...flags);
      expect(run.code).toBe(ExitCode.badInput);
      expect(run.stderr).toContain(join(dir, 'bad.yaml'));
      expect(run.stdout).toBe('');
    }
    await expectNoParent(ns, 'refused-yaml');
    expect(await liveConfigMap(ns, 'good')).toBeUndefined();
  });

  it('creates no parent for an empty directory without --allow-empty', async () => {
    const ns = await freshNamespace('cli-refused');
    const dir = await mkdtemp(join(tmpdir(), 'applyset-empty-'));
    emptyDirs.push(dir);
    for (const flags of [[], ['--prune']]) {
      const run = await applyInNamespace(ns, dir, 'refused-empty', ...flags);
      // Nothing recorded, nothing to apply: the run does nothing, and says so.
      expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
      expect(run.stdout).toMatch(/^0 created, 0 configured, 0 unchanged, 0 pruned\b/);
      await expectNoParent(ns, 'refused-empty');
    }
    // Nothing at all was created in the namespace by the runs.
    const { stdout } = await kubectl(['get', 'configmaps', '-n', ns, '-o', 'name']);
    expect(stdout.split('\n').filter((line) => line !== '' && line !== 'configmap/kube-root-ca.crt')).toEqual(
      [],
    );
  });

  it('creates no parent when every object is owned by another set', async () => {
    const ns = await freshNamespace('cli-refused');
    const dir = await writeSetDirectory({
      'a.yaml': configMapYaml(ns, 'a', { owner: 'first' }),
      'b.yaml': configMapYaml(ns, 'b', { owner: 'first' }),
    });
    const first = await applyInNamespace(ns, dir, 'first', '--prune');
    expect(first.code).toBe(ExitCode.ok);
    const firstParent = await liveConfigMap(ns, 'first');
    expect(firstParent).toBeDefined();
    const before = { a: await liveConfigMap(ns, 'a'), b: await liveConfigMap(ns, 'b') };

    // The same files as another set: every object conflicts, nothing is applied.
    for (const flags of [[], ['--prune']]) {
      const second = await applyInNamespace(ns, dir, 'second', ...flags);
      expect(second.code).toBe(ExitCode.partialFailure);
      expect(second.stderr).toContain('configmap/a');
      expect(second.stderr).toContain('configmap/b');
      expect(second.stderr).toContain('owned by another set');
      // The other set is named as users know it, by its parent, not by a uid.
      expect(second.stderr).toContain(`owned by another set (configmap/first -n ${ns})`);
      await expectNoParent(ns, 'second');
    }
    // The first set and its objects are untouched.
    expect(await liveConfigMap(ns, 'a')).toEqual(before.a);
    expect(await liveConfigMap(ns, 'b')).toEqual(before.b);
    expect(await liveConfigMap(ns, 'first')).toEqual(firstParent);
    const firstUid = (firstParent?.['metadata'] as { uid?: string } | undefined)?.uid;
    expect(annotations(await liveConfigMap(ns, 'a'))['kubectl.kubernetes.io/apply-owner']).toBe(firstUid);
  });
});

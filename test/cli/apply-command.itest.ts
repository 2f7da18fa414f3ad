import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import {
  annotations,
  configMapYaml,
  getObject,
  kubectl,
  runCommand,
  writeSetDirectory,
} from '../apply/apply-test-kit.js';
import { applyInNamespace, liveConfigMap } from './apply-in-namespace.js';
import { freshNamespace } from './cli-test-kit.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('applyset apply', () => {
  it("runs the proposal's example: foo, bar then foo, baz deletes bar, creates baz, updates foo", async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'foo.yaml': configMapYaml(ns, 'foo', { version: '1' }),
      'bar.yaml': configMapYaml(ns, 'bar', { version: '1' }),
    });
    const first = await applyInNamespace(ns, dir, 'example', '--prune');
    expect(first).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(first.stdout).toBe(
      'configmap/bar created\nconfigmap/foo created\n' +
        '2 created, 0 configured, 0 unchanged, 0 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );

    await rm(join(dir, 'bar.yaml'));
    await writeFile(join(dir, 'foo.yaml'), configMapYaml(ns, 'foo', { version: '2' }));
    await writeFile(join(dir, 'baz.yaml'), configMapYaml(ns, 'baz', { version: '1' }));

    const diff = await runCommand(diffCommand, ['-f', dir, '--applyset', 'example', '-n', ns, '--prune']);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain(`+ configmap/baz -n ${ns} (new)`);
    expect(diff.stdout).toContain(`~ configmap/foo -n ${ns}\n    data.version: "1" → "2"`);
    expect(diff.stdout).toContain(`- configmap/bar -n ${ns} (pruned by apply --prune)`);

    const second = await applyInNamespace(ns, dir, 'example', '--prune');
    expect(second).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(second.stdout).toBe(
      'configmap/baz created\nconfigmap/foo configured\nconfigmap/bar pruned\n' +
        '1 created, 1 configured, 0 unchanged, 1 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );
    expect(await liveConfigMap(ns, 'bar')).toBeUndefined();
    expect((await liveConfigMap(ns, 'foo'))?.['data']).toEqual({ version: '2' });
    expect(await liveConfigMap(ns, 'baz')).toBeDefined();

    const again = await runCommand(diffCommand, ['-f', dir, '--applyset', 'example', '-n', ns, '--prune']);
    expect(again).toMatchObject({ code: 0, stdout: '' });
  });

  it('neither changes nor prunes an object owned by another set, and says so by name', async () => {
    const ns = await freshNamespace();
    const mine = await writeSetDirectory({
      'shared.yaml': configMapYaml(ns, 'shared', { owner: 'mine' }),
      'other.yaml': configMapYaml(ns, 'other', { owner: 'mine' }),
    });
    expect((await applyInNamespace(ns, mine, 'mine', '--prune')).code).toBe(0);
    // Another set takes `other` over (as a hand-over would leave it).
    await kubectl([
      'annotate',
      '-n',
      ns,
      'configmap/other',
      '--overwrite',
      'kubectl.kubernetes.io/apply-owner=someone-else',
    ]);

    const theirs = await writeSetDirectory({
      'shared.yaml': configMapYaml(ns, 'shared', { owner: 'theirs' }),
    });
    const conflict = await applyInNamespace(ns, theirs, 'theirs', '--prune');
    expect(conflict.code).toBe(ExitCode.partialFailure);
    expect(conflict.stderr).toContain(
      `error: ${join(theirs, 'shared.yaml')} (document 0): configmap/shared (namespace ${ns}): owned by another set`,
    );
    expect((await liveConfigMap(ns, 'shared'))?.['data']).toEqual({ owner: 'mine' });

    // `mine` drops `other` from its files: it is not ours any more, so it is kept.
    await rm(join(mine, 'other.yaml'));
    const prune = await applyInNamespace(ns, mine, 'mine', '--prune');
    expect(prune.code).toBe(ExitCode.ok);
    expect(prune.stdout).toContain(
      'configmap/other not pruned: kept: owned by another set (apply-owner someone-else)',
    );
    expect(await liveConfigMap(ns, 'other')).toBeDefined();
  });

  it('says (adopted) for an object it takes over, and leaves it alone as a conflict with --adopt=false', async () => {
    const ns = await freshNamespace();
    await kubectl(['-n', ns, 'create', 'configmap', 'by-hand', '--from-literal=from=hand']);
    const dir = await writeSetDirectory({ 'cm.yaml': configMapYaml(ns, 'by-hand', { from: 'file' }) });

    const refused = await applyInNamespace(ns, dir, 'adopting', '--adopt=false');
    expect(refused.code).toBe(ExitCode.partialFailure);
    expect(refused.stderr).toContain('exists without an apply-owner and adoption is disabled');
    expect(await liveConfigMap(ns, 'by-hand')).toMatchObject({ data: { from: 'hand' } });

    const adopted = await applyInNamespace(ns, dir, 'adopting');
    expect(adopted).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(adopted.stdout).toMatch(/^configmap\/by-hand configured \(adopted\)$/m);
    expect(await liveConfigMap(ns, 'by-hand')).toMatchObject({ data: { from: 'file' } });

    const again = await applyInNamespace(ns, dir, 'adopting');
    expect(again.stdout).toMatch(/^configmap\/by-hand unchanged$/m);
  });

  it("refuses to record the set in someone's own ConfigMap that is not an apply-config object", async () => {
    const ns = await freshNamespace();
    const own = await writeSetDirectory({ 'mine.yaml': configMapYaml(ns, 'settings', { keep: 'me' }) });
    expect((await applyInNamespace(ns, own, 'owner')).code).toBe(ExitCode.ok);
    const before = await liveConfigMap(ns, 'settings');

    const dir = await writeSetDirectory({ 'foo.yaml': configMapYaml(ns, 'foo', { version: '1' }) });
    const run = await applyInNamespace(ns, dir, 'settings', '--prune');
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain('configmap/settings');
    expect(run.stderr).toContain('is not an apply-config object');
    expect(await liveConfigMap(ns, 'foo')).toBeUndefined();
    expect(await liveConfigMap(ns, 'settings')).toEqual(before);
  });

  it('accepts --field-manager and --validate as kubectl does', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    const run = await applyInNamespace(ns, dir, 'set', '--field-manager', 'ci', '--validate=warn');
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(await liveConfigMap(ns, 'a')).toBeDefined();
    const bad = await applyInNamespace(ns, dir, 'set', '--validate=sometimes');
    expect(bad.code).toBe(ExitCode.badInput);
    expect(bad.stderr).toContain('invalid --validate value "sometimes"');
  });

  it('keeps an object annotated applyset.dev/prune: disabled', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'a.yaml': configMapYaml(ns, 'a', { x: '1' }),
      'keep.yaml': configMapYaml(ns, 'keep', { x: '1' }),
    });
    expect((await applyInNamespace(ns, dir, 'set', '--prune')).code).toBe(0);
    await kubectl(['annotate', '-n', ns, 'configmap/keep', 'applyset.dev/prune=disabled']);
    await rm(join(dir, 'keep.yaml'));

    const run = await applyInNamespace(ns, dir, 'set', '--prune');
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('configmap/keep not pruned: kept: annotated applyset.dev/prune: disabled');
    expect(await liveConfigMap(ns, 'keep')).toBeDefined();
  });

  it('refuses an empty set unless --allow-empty is given', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    expect((await applyInNamespace(ns, dir, 'set', '--prune')).code).toBe(0);
    await rm(join(dir, 'a.yaml'));

    const refused = await applyInNamespace(ns, dir, 'set', '--prune');
    expect(refused.code).toBe(ExitCode.badInput);
    expect(refused.stderr).toContain(
      'the set is empty and would prune all 1 objects it recorded; pass --allow-empty',
    );
    expect(await liveConfigMap(ns, 'a')).toBeDefined();

    const allowed = await applyInNamespace(ns, dir, 'set', '--prune', '--allow-empty');
    expect(allowed.code).toBe(ExitCode.ok);
    expect(allowed.stdout).toContain('configmap/a pruned');
    expect(await liveConfigMap(ns, 'a')).toBeUndefined();
  });

  it('changes nothing anywhere when one file holds invalid YAML, and names the file once', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'good.yaml': configMapYaml(ns, 'good', { x: '1' }),
      'nested/bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n',
    });
    const run = await applyInNamespace(ns, dir, 'set', '--prune', '-R');
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toMatch(
      new RegExp(
        `^error: ${escape(join(dir, 'nested/bad.yaml'))} \\(document 0\\) line \\d+ column \\d+: [^/]*$`,
        'm',
      ),
    );
    expect(run.stderr.split(join(dir, 'nested/bad.yaml')).length).toBe(2);
    expect(run.stdout).toBe('');
    expect(await liveConfigMap(ns, 'good')).toBeUndefined();
    expect(await liveConfigMap(ns, 'set')).toBeUndefined();
  });

  it('reports an immutable field clearly, and recreates the object with --force', async () => {
    const ns = await freshNamespace();
    const secret = (immutableValue: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: locked\n  namespace: ${ns}\nimmutable: true\ndata:\n  v: ${Buffer.from(immutableValue).toString('base64')}\n`;
    const dir = await writeSetDirectory({ 'locked.yaml': secret('one') });
    expect((await applyInNamespace(ns, dir, 'set')).code).toBe(0);
    const before = await getObject(`/api/v1/namespaces/${ns}/secrets/locked`);
    await writeFile(join(dir, 'locked.yaml'), secret('two'));

    const refused = await applyInNamespace(ns, dir, 'set');
    expect(refused.code).toBe(ExitCode.partialFailure);
    expect(refused.stderr).toMatch(/locked\.yaml \(document 0\): secret\/locked .*immutable.*--force/);

    const forced = await applyInNamespace(ns, dir, 'set', '--force');
    expect(forced.code).toBe(ExitCode.ok);
    const after = await getObject(`/api/v1/namespaces/${ns}/secrets/locked`);
    expect(after?.['data']).toEqual({ v: Buffer.from('two').toString('base64') });
    expect((after?.['metadata'] as { uid: string }).uid).not.toBe(
      (before?.['metadata'] as { uid: string }).uid,
    );
    expect(annotations(after)['kubectl.kubernetes.io/apply-owner']).toBeDefined();
  });

  it("dry-run prints each object in kubectl's words, the prunes too, and writes nothing", async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'a.yaml': configMapYaml(ns, 'a', { x: '1' }),
      'b.yaml': configMapYaml(ns, 'b', { x: '1' }),
      'c.yaml': configMapYaml(ns, 'c', { x: '1' }),
    });
    expect((await applyInNamespace(ns, dir, 'set', '--prune')).code).toBe(ExitCode.ok);
    await rm(join(dir, 'c.yaml'));
    await writeFile(join(dir, 'b.yaml'), configMapYaml(ns, 'b', { x: '2' }));
    await writeFile(join(dir, 'd.yaml'), configMapYaml(ns, 'd', { x: '1' }));

    const run = await applyInNamespace(ns, dir, 'set', '--prune', '--dry-run');
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).toBe(
      'configmap/a unchanged (dry run)\n' +
        'configmap/b configured (dry run)\n' +
        '    data.x: "1" → "2"\n' +
        'configmap/d created (dry run)\n' +
        'configmap/c pruned (dry run)\n' +
        'dry run: 1 to create, 1 to configure, 1 unchanged, 1 to prune, 0 not pruned, ' +
        '0 conflicts or errors; nothing was written\n',
    );
    // kubectl's own dry run names the same objects in the same words.
    const kubectlRun = await kubectl(['apply', '-n', ns, '-f', join(dir, 'd.yaml'), '--dry-run=client']);
    expect(kubectlRun.stdout).toBe('configmap/d created (dry run)\n');
    expect(await liveConfigMap(ns, 'd')).toBeUndefined();
    expect(await liveConfigMap(ns, 'c')).toBeDefined();
    expect((await liveConfigMap(ns, 'b'))?.['data']).toEqual({ x: '1' });
  });
});

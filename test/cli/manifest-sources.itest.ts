import { join } from 'node:path';
import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, kubectl, writeSetDirectory } from '../apply/apply-test-kit.js';
import { freshNamespace, runCli } from './cli-test-kit.js';
import { liveConfigMap } from './apply-in-namespace.js';

// Issue #11: -f repeats and is read in order, -f - is standard input, a directory is read without
// its subdirectories unless -R, as kubectl apply reads them.

describe('applyset apply -f', () => {
  it('reads standard input for -f -, beside a directory', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    const run = await runCli(applyCommand, ['-f', dir, '-f', '-', '--applyset', 'set', '-n', ns], {
      stdin: `${configMapYaml(ns, 'from-stdin', { x: '1' })}---\n${configMapYaml(ns, 'also', { x: '1' })}`,
    });
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).toBe(
      'configmap/a created\nconfigmap/from-stdin created\nconfigmap/also created\n' +
        '3 created, 0 configured, 0 unchanged, 0 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );
    expect(await liveConfigMap(ns, 'from-stdin')).toBeDefined();
  });

  it('names standard input STDIN in its errors, as kubectl does', async () => {
    const ns = await freshNamespace();
    const run = await runCli(applyCommand, ['-f', '-', '--applyset', 'set', '-n', ns], {
      stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata: [\n',
    });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toMatch(/^error: STDIN \(document 0\) line \d+ column \d+: /m);
  });

  it('reads a directory without its subdirectories unless -R is given, as kubectl does', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'top.yaml': configMapYaml(ns, 'top', { x: '1' }),
      'sub/deep.yaml': configMapYaml(ns, 'deep', { x: '1' }),
    });
    const flat = await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns]);
    expect(flat).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(flat.stdout).toContain('configmap/top created\n');
    expect(await liveConfigMap(ns, 'deep')).toBeUndefined();
    // kubectl reads the same files: without -R only top.yaml.
    const kubectlFlat = await kubectl(['apply', '-n', ns, '-f', dir, '--dry-run=client', '-o', 'name']);
    expect(kubectlFlat.stdout).toBe('configmap/top\n');

    const deep = await runCli(applyCommand, ['-f', dir, '-R', '--applyset', 'set', '-n', ns]);
    expect(deep).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(deep.stdout).toContain('configmap/deep created\n');
    const kubectlDeep = await kubectl(['apply', '-n', ns, '-f', dir, '-R', '--dry-run=client', '-o', 'name']);
    expect(kubectlDeep.stdout).toBe('configmap/deep\nconfigmap/top\n');
  });

  it('names the path given when it does not exist, and writes nothing', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    const run = await runCli(applyCommand, [
      '-f',
      dir,
      '-f',
      join(dir, 'nope'),
      '--applyset',
      'set',
      '-n',
      ns,
    ]);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toBe(`applyset apply: the path "${join(dir, 'nope')}" does not exist\n`);
    expect(await liveConfigMap(ns, 'a')).toBeUndefined();
  });

  it('says that apply cannot use generateName, as kubectl does', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'gen.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: gen-\n',
    });
    const run = await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns]);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(
      `error: ${join(dir, 'gen.yaml')} (document 0): configmap/<no name>: apply cannot use generateName ("gen-")`,
    );
    const kubectlRun = await kubectl(['apply', '-n', ns, '-f', dir]).catch(
      (error: { stderr: string }) => error,
    );
    expect(kubectlRun.stderr).toContain('cannot use generate name with apply');
  });
});

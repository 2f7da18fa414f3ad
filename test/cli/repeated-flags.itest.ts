import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, writeSetDirectory } from '../apply/apply-test-kit.js';
import { freshNamespace, runCli } from './cli-test-kit.js';
import { liveConfigMap } from './apply-in-namespace.js';

// Issue #8: `-f a -f b --prune` used to keep only b and prune everything of a. Every -f counts, as
// in kubectl; any other flag given twice is refused before anything is read or written.

describe('applyset apply with repeated flags', () => {
  it('applies every -f and prunes nothing of the first when --prune is given', async () => {
    const ns = await freshNamespace();
    const a = await writeSetDirectory({
      'a1.yaml': configMapYaml(ns, 'a1', { from: 'a' }),
      'a2.yaml': configMapYaml(ns, 'a2', { from: 'a' }),
    });
    const b = await writeSetDirectory({ 'b1.yaml': configMapYaml(ns, 'b1', { from: 'b' }) });

    const first = await runCli(applyCommand, ['-f', a, '--applyset', 'set', '-n', ns, '--prune']);
    expect(first).toMatchObject({ code: ExitCode.ok, stderr: '' });

    const both = await runCli(applyCommand, ['-f', a, '-f', b, '--applyset', 'set', '-n', ns, '--prune']);
    expect(both).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(both.stdout).toBe(
      'configmap/a1 unchanged\nconfigmap/a2 unchanged\nconfigmap/b1 created\n' +
        '1 created, 0 configured, 2 unchanged, 0 pruned, 0 not pruned, 0 conflicts, 0 failed\n',
    );
    for (const name of ['a1', 'a2', 'b1']) expect(await liveConfigMap(ns, name)).toBeDefined();

    // The same again, b first: order changes nothing of the set, and still nothing is pruned.
    const again = await runCli(applyCommand, ['-f', b, '-f', a, '--applyset', 'set', '-n', ns, '--prune']);
    expect(again).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(again.stdout).toContain('0 pruned');
    for (const name of ['a1', 'a2', 'b1']) expect(await liveConfigMap(ns, name)).toBeDefined();
  });

  it.each([
    [
      '--applyset',
      ['--applyset', 'x', '--applyset', 'y'],
      /--applyset was given more than once \("x", then "y"\)/,
    ],
    ['-n', ['--applyset', 'x', '-n', 'NS', '-n', 'other'], /--namespace \(-n\) was given more than once/],
    ['--prune', ['--applyset', 'x', '--prune', '--prune'], /--prune was given more than once/],
  ])('refuses %s given twice with a usage error and writes nothing', async (_flag, flags, message) => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    const given = flags.map((flag) => flag.replace('NS', ns));
    const argv = ['-f', dir, ...given, ...(given.includes('-n') ? [] : ['-n', ns])];
    const run = await runCli(applyCommand, argv);
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('usage: applyset apply');
    expect(run.stdout).toBe('');
    for (const name of ['a', 'x', 'y']) expect(await liveConfigMap(ns, name)).toBeUndefined();
  });
});

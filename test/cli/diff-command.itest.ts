import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { applyCommand } from '../../src/cli/apply-command.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, writeSetDirectory } from '../apply/apply-test-kit.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

describe('applyset diff', () => {
  it('has its own help, which names --prune', async () => {
    const run = await runCli(diffCommand, ['--help']);
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^usage: applyset diff /);
    expect(run.stdout).toContain('--prune');
    expect(run.stdout).not.toContain('usage: applyset apply');
  });

  it('shows the prunes apply --prune would make by default, says so, and leaves them out with --prune=false', async () => {
    const ns = await freshNamespace();
    const dir = await writeSetDirectory({
      'keep.yaml': configMapYaml(ns, 'keep', { x: '1' }),
      'gone.yaml': configMapYaml(ns, 'gone', { x: '1' }),
    });
    expect((await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns, '--prune'])).code).toBe(0);
    await rm(join(dir, 'gone.yaml'));

    const byDefault = await runCli(diffCommand, ['-f', dir, '--applyset', 'set', '-n', ns]);
    expect(byDefault).toMatchObject({ code: 1, stderr: '' });
    expect(byDefault.stdout).toBe(`- configmap/gone -n ${ns} (pruned by apply --prune)\n`);

    const withFlag = await runCli(diffCommand, ['-f', dir, '--applyset', 'set', '-n', ns, '--prune']);
    expect(withFlag).toEqual(byDefault);

    const without = await runCli(diffCommand, ['-f', dir, '--applyset', 'set', '-n', ns, '--prune=false']);
    expect(without).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

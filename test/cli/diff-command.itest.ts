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

  it("masks a Secret's values in the changed fields, as kubectl diff does", async () => {
    const ns = await freshNamespace();
    const secret = (value: string) =>
      [
        'apiVersion: v1',
        'kind: Secret',
        'metadata:',
        '  name: creds',
        `  namespace: ${ns}`,
        'stringData:',
        `  token: ${value}`,
        '',
      ].join('\n');
    const dir = await writeSetDirectory({ 'creds.yaml': secret('first-token-value') });
    expect((await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns])).code).toBe(0);
    const changed = await writeSetDirectory({ 'creds.yaml': secret('second-token-value') });
    const run = await runCli(diffCommand, ['-f', changed, '--applyset', 'set', '-n', ns, '--prune=false']);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    expect(run.stdout).toContain(`~ secret/creds -n ${ns}\n`);
    // The server folds stringData into data, so the change shows where it lands, masked on both sides.
    expect(run.stdout).toContain('data.token: "*** (before)" → "*** (after)"');
    for (const value of ['first-token-value', 'second-token-value']) {
      expect(run.stdout).not.toContain(value);
      expect(run.stdout).not.toContain(Buffer.from(value).toString('base64'));
    }
  });
});

import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { writeSetDirectory } from '../apply/apply-test-kit.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #13: `--exclude` keeps files out of a set, gitignore-style, matched below each -f directory.

const configMap = (namespace: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ${name}, namespace: ${namespace} }\n`;

describe('applyset apply --exclude', () => {
  it('leaves matching files out of a directory, and refuses the set without it', async () => {
    const ns = await freshNamespace('exclude');
    const dir = await writeSetDirectory({
      'app.yaml': configMap(ns, 'app'),
      'broken.yaml': 'kind: [unclosed\n',
      'notes-1.yaml': configMap(ns, 'notes-1'),
      'sub/kept.yaml': configMap(ns, 'kept'),
    });
    const refused = await runCli(applyCommand, ['-f', dir, '-R', '--applyset', 'set', '-n', ns]);
    expect(refused.code).toBe(ExitCode.badInput);
    const run = await runCli(applyCommand, [
      '-f',
      dir,
      '-R',
      '--applyset',
      'set',
      '-n',
      ns,
      '--exclude',
      'broken.yaml',
      '--exclude',
      'notes-*',
    ]);
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('configmap/app created');
    expect(run.stdout).toContain('configmap/kept created');
    expect(run.stdout).not.toContain('notes-1');
  });

  it('never leaves out a file named with -f itself', async () => {
    const ns = await freshNamespace('exclude-file');
    const dir = await writeSetDirectory({ 'notes-2.yaml': configMap(ns, 'notes-2') });
    const run = await runCli(applyCommand, [
      '-f',
      `${dir}/notes-2.yaml`,
      '--applyset',
      'set',
      '-n',
      ns,
      '--exclude',
      'notes-*',
    ]);
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('configmap/notes-2 created');
  });
});

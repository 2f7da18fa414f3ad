import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, writeSetDirectory } from '../apply/apply-test-kit.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #11: a long run shows one updating line on a terminal's stderr, and never anything of it in
// non-terminal output (a CI log, a pipe).

async function largeSet(namespace: string, count: number): Promise<string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i += 1) {
    files[`cm-${String(i).padStart(3, '0')}.yaml`] = configMapYaml(namespace, `cm-${i}`, { i: String(i) });
  }
  return writeSetDirectory(files);
}

describe('applyset apply progress', () => {
  it('writes no progress line when stderr is not a terminal', async () => {
    const ns = await freshNamespace();
    const dir = await largeSet(ns, 120);
    const run = await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns, '--prune']);
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(run.stdout).not.toContain('\r');
    expect(run.stdout).toContain('120 created');
  });

  it('rewrites one line on a terminal while a set of more than 100 objects is applied', async () => {
    const ns = await freshNamespace();
    const dir = await largeSet(ns, 120);
    const run = await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns, '--prune'], {
      tty: true,
    });
    expect(run.code).toBe(ExitCode.ok);
    const frames = run.stderr.split('\r\x1b[K').filter((frame) => frame !== '');
    expect(frames[0]).toBe('applied 1/120');
    expect(frames.at(-1)).toBe('applied 120/120');
    // One line rewritten in place: no newline in it, and it is erased before the per-object output.
    expect(run.stderr).not.toContain('\n');
    expect(run.stderr.endsWith('\r\x1b[K')).toBe(true);
    expect(run.stdout).toContain('120 created');
  });

  it('draws nothing on a terminal for a set of 100 objects or fewer', async () => {
    const ns = await freshNamespace();
    const dir = await largeSet(ns, 20);
    const run = await runCli(applyCommand, ['-f', dir, '--applyset', 'set', '-n', ns], { tty: true });
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
  });
});

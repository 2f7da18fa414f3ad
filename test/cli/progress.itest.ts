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

  // The command draws the line from ApplySetRequest.onProgress (see progress-line.test.ts); the
  // engine does not report progress yet.
  it.todo('rewrites one line on a terminal while a set of more than 100 objects is applied');
});

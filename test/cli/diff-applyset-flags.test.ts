import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { runCli } from './cli-test-kit.js';

// The flags of `applyset diff --applyset-object`, refused before any kubeconfig is read.
describe('applyset diff --applyset-object flags', () => {
  it('has its own help', async () => {
    const run = await runCli(diffCommand, ['--applyset-object', 'site', '--help'], { env: {} });
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^usage: applyset diff --applyset-object NAME /);
    expect(run.stdout).toContain('--local DIR | --ref REF');
    expect(run.stdout).toContain(
      '[--kustomize-binary PATH] [--kustomize-timeout 60s] [--kustomize-max-memory 256Mi]',
    );
    // The controller's flag: without it, a dependency of another namespace is refused, as it refuses it.
    expect(run.stdout).toContain('[--allow-cross-namespace-refs]');
    const plain = await runCli(diffCommand, ['--help'], { env: {} });
    expect(plain.stdout).toContain('applyset diff --applyset-object NAME');
  });

  it.each([
    [['--applyset-object', 'site', '--local', '.', '--ref', 'main'], '--local and --ref exclude each other'],
    [['--applyset-object', 'site', '-o', 'yaml'], '-o must be text or markdown, got "yaml"'],
    [['--applyset-object='], '--applyset-object needs the name of an ApplySet'],
    [['--applyset-object', 'site', '-f', 'x.yaml'], '-f'],
    [
      ['--applyset-object', 'site', '--kustomize-timeout', '0s'],
      '--kustomize-timeout must be longer than 0s',
    ],
    [['--applyset-object', 'site', '--kustomize-timeout', 'soon'], '--kustomize-timeout: not a duration'],
    [['--applyset-object', 'site', '--kustomize-max-memory', 'lots'], '--kustomize-max-memory'],
    [['--applyset-object', 'site', '--kustomize-binary='], '--kustomize-binary needs a path or a name'],
  ])('refuses %j as bad input', async (argv, message) => {
    const run = await runCli(diffCommand, argv, { env: {} });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`applyset diff: `);
    expect(run.stderr).toContain(message);
  });
});

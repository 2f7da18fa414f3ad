import { applyCommand } from '../../src/cli/apply-command.js';
import { diffCommand } from '../../src/cli/diff-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { writeSetDirectory } from '../apply/apply-test-kit.js';
import { cliHome } from '../harness/cli-home.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { adminKubeconfigPath } from '../harness/test-cluster.js';
import { freshNamespace, runCli } from './cli-test-kit.js';

// Issue #26: `applyset apply -k DIR` and `diff -k DIR` take a kustomization as kubectl does, built by
// the same runner the controller uses (no remote bases, no plugins).

describe('applyset apply -k', () => {
  let env: Record<string, string>;

  beforeAll(async () => {
    env = {
      KUBECONFIG: adminKubeconfigPath(),
      HOME: cliHome(),
      APPLYSET_KUSTOMIZE_BINARY: await kustomizeBinary(),
    };
  });

  const overlay = (namespace: string, extra = '') =>
    writeSetDirectory({
      'base/kustomization.yaml':
        'resources: [settings.yaml]\nconfigMapGenerator:\n- name: app\n  literals: [MODE=base]\n',
      'base/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1"}\n',
      'prod/kustomization.yaml': `resources: [../base]\nnamespace: ${namespace}\nnamePrefix: prod-\n${extra}`,
    });

  it('applies the build of an overlay whose base is ../base, then diff -k finds nothing to change', async () => {
    const ns = await freshNamespace('kustomize-cli');
    const dir = await overlay(ns);
    const applied = await runCli(applyCommand, ['-k', `${dir}/prod`, '--applyset', 'set', '-n', ns], { env });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(ExitCode.ok);
    expect(applied.stdout).toContain('configmap/prod-settings created');
    expect(applied.stdout).toMatch(/configmap\/prod-app-[a-z0-9]{10} created/);
    const diff = await runCli(diffCommand, ['-k', `${dir}/prod`, '--applyset', 'set', '-n', ns], { env });
    expect(diff.code).toBe(ExitCode.ok);
    expect(diff.stdout).toBe('');
  });

  it('refuses a remote base before anything is built or written, naming the kustomization and entry', async () => {
    const ns = await freshNamespace('kustomize-cli-remote');
    const dir = await overlay(ns, 'components: [https://github.com/example/components//monitoring?ref=v1]\n');
    const run = await runCli(applyCommand, ['-k', `${dir}/prod`, '--applyset', 'set', '-n', ns], { env });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain(
      'prod/kustomization.yaml: components entry "https://github.com/example/components//monitoring?ref=v1" is remote',
    );
    expect(run.stdout).toBe('');
  });

  it("takes -f or -k, not both, in kubectl's words", async () => {
    const run = await runCli(applyCommand, ['-k', '.', '-f', 'x.yaml', '--applyset', 'set'], { env });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toContain('only one of -f or -k can be specified');
  });
});

// Issue #34, item 10: one flag and one variable name the binary for every command, and without either
// a user who has kubectl (as `kubectl apply -k` users do) is built for by `kubectl kustomize`.
describe('the kustomize binary of apply -k and diff -k', () => {
  let binary: string;
  const base = { KUBECONFIG: adminKubeconfigPath(), HOME: cliHome() };
  const kustomization = (namespace: string) =>
    writeSetDirectory({
      'app/kustomization.yaml': `resources: [settings.yaml]\nnamespace: ${namespace}\nnamePrefix: k-\n`,
      'app/settings.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1"}\n',
    });
  beforeAll(async () => {
    binary = await kustomizeBinary();
  });

  it('apply -k and diff -k take --kustomize-binary, as the controller does', async () => {
    const ns = await freshNamespace('kustomize-flag');
    const dir = await kustomization(ns);
    const flags = ['-k', `${dir}/app`, '--applyset', 'set', '-n', ns, '--kustomize-binary', binary];
    const applied = await runCli(applyCommand, flags, { env: base });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: ExitCode.ok, stderr: '' });
    expect(applied.stdout).toContain('configmap/k-settings created');
    const diff = await runCli(diffCommand, flags, { env: base });
    expect({ code: diff.code, stdout: diff.stdout }).toEqual({ code: ExitCode.ok, stdout: '' });
  });

  it('builds with kubectl kustomize when no binary is named and kustomize is not on PATH', async () => {
    const ns = await freshNamespace('kustomize-kubectl');
    const dir = await kustomization(ns);
    const applied = await runCli(applyCommand, ['-k', `${dir}/app`, '--applyset', 'set', '-n', ns], {
      env: base,
    });
    expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: ExitCode.ok, stderr: '' });
    expect(applied.stdout).toContain('configmap/k-settings created');
  });

  it('names the flag and the variable it takes when the named binary is missing, and writes nothing', async () => {
    const ns = await freshNamespace('kustomize-missing');
    const dir = await kustomization(ns);
    const run = await runCli(applyCommand, ['-k', `${dir}/app`, '--applyset', 'set', '-n', ns], {
      env: { ...base, APPLYSET_KUSTOMIZE_BINARY: '/nonexistent/kustomize' },
    });
    expect(run.code).toBe(ExitCode.failure);
    expect(run.stderr).toContain(
      'kustomize is not installed: no executable "/nonexistent/kustomize" (--kustomize-binary or APPLYSET_KUSTOMIZE_BINARY)',
    );
    expect(run.stdout).toBe('');
    // The flag, given too, wins over the variable.
    const flagged = await runCli(
      applyCommand,
      ['-k', `${dir}/app`, '--applyset', 'set', '-n', ns, '--kustomize-binary', binary],
      { env: { ...base, APPLYSET_KUSTOMIZE_BINARY: '/nonexistent/kustomize' } },
    );
    expect(flagged.code).toBe(ExitCode.ok);
  });
});

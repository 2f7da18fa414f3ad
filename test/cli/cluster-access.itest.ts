import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { applyCommand } from '../../src/cli/apply-command.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { configMapYaml, writeSetDirectory } from '../apply/apply-test-kit.js';
import { adminKubeConfig, adminKubeconfigPath } from '../harness/test-cluster.js';
import { freshNamespace, runCli } from './cli-test-kit.js';
import { liveConfigMap } from './apply-in-namespace.js';
import { cliHome } from '../harness/cli-home.js';

// Issue #11: --kubeconfig, --context and a KUBECONFIG listing several files are read as kubectl reads
// them; a broken manifest is named before any connection; an unreachable cluster names the server and
// the kubeconfig tried.

/** Nothing listens on port 1 of the loopback: a connection there is refused at once. */
const UNREACHABLE = 'https://127.0.0.1:1';

/** A kubeconfig whose current context `nowhere` points at UNREACHABLE with the admin's credentials. */
async function unreachableKubeconfig(): Promise<string> {
  const admin = adminKubeConfig();
  const user = admin.getCurrentUser();
  if (user === null) throw new Error('the admin kubeconfig has no user');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'nowhere', server: UNREACHABLE, skipTLSVerify: true }],
    users: [{ ...user, name: 'nowhere-user' }],
    contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nowhere-user' }],
    currentContext: 'nowhere',
  });
  const dir = await writeSetDirectory({});
  const path = join(dir, 'unreachable.kubeconfig');
  await writeFile(path, config.exportConfig());
  return path;
}

const envWith = (kubeconfig: string) => ({ KUBECONFIG: kubeconfig, HOME: cliHome() });

describe('applyset apply and the kubeconfig', () => {
  it('merges a KUBECONFIG of several files, skipping a missing one, and honours --context', async () => {
    const ns = await freshNamespace();
    const unreachable = await unreachableKubeconfig();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    // The first existing file sets the current context (nowhere); the admin context comes from the
    // second file and is picked with --context, as kubectl would pick it.
    const env = envWith(
      [join(tmpdir(), 'no-such-kubeconfig'), unreachable, adminKubeconfigPath()].join(delimiter),
    );
    const adminContext = adminKubeConfig().getCurrentContext();
    const run = await runCli(
      applyCommand,
      ['-f', dir, '--applyset', 'set', '-n', ns, '--context', adminContext],
      { env },
    );
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(await liveConfigMap(ns, 'a')).toBeDefined();

    const unknown = await runCli(
      applyCommand,
      ['-f', dir, '--applyset', 'set', '-n', ns, '--context', 'nope'],
      {
        env,
      },
    );
    expect(unknown.code).toBe(ExitCode.badInput);
    expect(unknown.stderr).toContain('context "nope" does not exist in kubeconfig');
  });

  it('reads --kubeconfig alone, whatever KUBECONFIG says', async () => {
    const ns = await freshNamespace();
    const unreachable = await unreachableKubeconfig();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml(ns, 'a', { x: '1' }) });
    const run = await runCli(
      applyCommand,
      ['-f', dir, '--applyset', 'set', '-n', ns, '--kubeconfig', adminKubeconfigPath()],
      { env: envWith(unreachable) },
    );
    expect(run).toMatchObject({ code: ExitCode.ok, stderr: '' });
  });

  it('names the broken file, not ECONNREFUSED, when the cluster is unreachable too', async () => {
    const unreachable = await unreachableKubeconfig();
    const broken = await writeSetDirectory({
      'good.yaml': configMapYaml('default', 'good', { x: '1' }),
      'bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n',
    });
    const run = await runCli(applyCommand, ['-f', broken, '--applyset', 'set'], {
      env: envWith(unreachable),
    });
    expect(run.code).toBe(ExitCode.badInput);
    expect(run.stderr).toMatch(
      new RegExp(
        `^error: ${join(broken, 'bad.yaml').replaceAll('.', '\\.')} \\(document 0\\) line \\d+ column \\d+: `,
      ),
    );
    expect(run.stderr).not.toContain('ECONNREFUSED');
    expect(run.stderr).not.toContain('127.0.0.1');
  });

  it('says which server and which kubeconfig it tried when the cluster is unreachable', async () => {
    const unreachable = await unreachableKubeconfig();
    const dir = await writeSetDirectory({ 'a.yaml': configMapYaml('default', 'a', { x: '1' }) });
    const run = await runCli(applyCommand, ['-f', dir, '--applyset', 'set'], { env: envWith(unreachable) });
    expect(run.code).toBe(ExitCode.failure);
    expect(run.stderr).toBe(
      `applyset apply: cannot reach the cluster at ${UNREACHABLE} (context "nowhere" of kubeconfig ` +
        `${unreachable}): connect ECONNREFUSED 127.0.0.1:1\n`,
    );
  });
});

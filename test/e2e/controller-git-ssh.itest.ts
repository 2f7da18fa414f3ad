import { runShippedCli } from '../harness/shipped-cli.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import {
  generateSshKey,
  startSshGitServer,
  type SshGitServer,
  type SshKeyPair,
} from '../harness/ssh-git-server.js';
import { adminKubeconfigPath, uniqueName } from '../harness/test-cluster.js';
import { startControllerInNamespace, stopControllersAndGit } from './controller-testbed.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  GROUP,
  PLURAL,
  VERSION,
  waitForAppliedCommit,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';
import { GitServerPool } from './git-server-pool.js';
import { coreRule, createTenantAccount } from './locked-down-controller.js';

// Git over SSH through the real controller: a real OpenSSH server (sshd on loopback) runs upload-pack
// for the repositories of the Git server harness. The ApplySet's Secret holds the deploy key
// (`identity`, `password` for its passphrase) and `known_hosts`, and names its host; the server's key is
// always checked, so a known_hosts without it stalls with HostKeyMismatch and the key the server showed,
// and a key the server does not know stalls with AuthenticationFailed.

describe('the controller fetching Git over SSH', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-git-ssh');
  const servers = new GitServerPool();
  let sshd: SshGitServer | undefined;
  let key: SshKeyPair;

  const ssh = (): SshGitServer => {
    if (sshd === undefined) throw new Error('sshd did not start');
    return sshd;
  };

  /** A repository of its own for each ApplySet, whose one ConfigMap is `<name>-config`. */
  const repository = async (name: string): Promise<GitTestServer> => {
    const server = await startGitServer({
      repositoryName: `${name}.git`,
      files: { 'cm.yaml': configMapYaml(`${name}-config`, { round: '1' }) },
    });
    servers.adopt(server);
    return server;
  };

  const createSecret = async (name: string, data: Record<string, string>) => {
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, annotations: { 'applyset.dev/source-hosts': '127.0.0.1' } },
        stringData: data,
      },
    });
  };

  const stalled = async (name: string, reason: string): Promise<ApplySetView> => {
    const view = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(view, 'Stalled')?.reason).toBe(reason);
    expect(JSON.stringify(view)).not.toContain('PRIVATE KEY');
    return view;
  };

  beforeAll(async () => {
    await startControllerInNamespace(c, namespace);
    await createTenantAccount(c, namespace, 'tenant', [
      coreRule('configmaps'),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    [sshd, key] = await Promise.all([startSshGitServer(), generateSshKey('ed25519')]);
    await sshd.authorize(key.publicKey);
  }, 60_000);

  afterAll(async () => {
    await stopControllersAndGit(servers);
    await sshd?.close();
  });

  /** The repository of the first test, which the CLI's preview reads after it. */
  let overSsh: GitTestServer | undefined;

  it('applies a branch fetched over ssh://, then its new commit', async () => {
    const git = await repository('over-ssh');
    overSsh = git;
    await createSecret('deploy-key', { identity: key.privateKey, known_hosts: `${ssh().knownHostsLine}\n` });
    const url = ssh().urlOf(git.repositoryDir);
    await createApplySet(c, namespace, 'over-ssh', {
      url,
      secretName: 'deploy-key',
      serviceAccountName: 'tenant',
    });
    await waitForAppliedCommit(c, namespace, 'over-ssh', await git.revParse('main'));
    expect(await configMapData(c, namespace, 'over-ssh-config')).toEqual({ round: '1' });

    const next = await git.writeFiles({ 'cm.yaml': configMapYaml('over-ssh-config', { round: '2' }) });
    await waitForAppliedCommit(c, namespace, 'over-ssh', next, 60_000);
    expect(await configMapData(c, namespace, 'over-ssh-config')).toEqual({ round: '2' });
  }, 120_000);

  it('previews another branch over SSH with the CLI, as users run it, and applies nothing', async () => {
    const git = overSsh;
    if (git === undefined) throw new Error('the first test did not start its repository');
    await git.writeFiles({ 'cm.yaml': configMapYaml('over-ssh-config', { round: '3' }) }, { branch: 'next' });
    const preview = await runShippedCli(
      [
        'diff',
        '--applyset-object',
        'over-ssh',
        '-n',
        namespace,
        '--ref',
        'next',
        '--allowed-source-hosts',
        '127.0.0.1',
      ],
      {
        ...process.env,
        KUBECONFIG: adminKubeconfigPath(),
      },
    );
    // Exit 1: the preview found changes, as kubectl diff says so.
    expect(preview.code).toBe(1);
    expect(preview.stdout).toContain(`~ configmap/over-ssh-config -n ${namespace}`);
    expect(preview.stdout).toContain('data.round: "2" → "3"');
    expect(await configMapData(c, namespace, 'over-ssh-config')).toEqual({ round: '2' });
  }, 120_000);

  it('applies with a passphrase-protected ECDSA key, its passphrase in `password`', async () => {
    const git = await repository('passphrase');
    const ecdsa = await generateSshKey('ecdsa', 'correct horse');
    await ssh().authorize(ecdsa.publicKey);
    await createSecret('encrypted-key', {
      identity: ecdsa.privateKey,
      password: 'correct horse',
      known_hosts: ssh().knownHostsLine,
    });
    const url = ssh().urlOf(git.repositoryDir);
    await createApplySet(c, namespace, 'passphrase', {
      url,
      secretName: 'encrypted-key',
      serviceAccountName: 'tenant',
    });
    await waitForAppliedCommit(c, namespace, 'passphrase', await git.revParse('main'), 60_000);
    expect(await configMapData(c, namespace, 'passphrase-config')).toEqual({ round: '1' });
  }, 90_000);

  it('stalls with HostKeyMismatch, naming the key the server showed, when known_hosts lacks it', async () => {
    const git = await repository('host-key');
    const other = await generateSshKey('ed25519');
    const [type, blob] = other.publicKey.split(' ');
    await createSecret('wrong-host-key', {
      identity: key.privateKey,
      known_hosts: `[127.0.0.1]:${ssh().port} ${type} ${blob}\n`,
    });
    const url = ssh().urlOf(git.repositoryDir);
    await createApplySet(c, namespace, 'host-key', {
      url,
      secretName: 'wrong-host-key',
      serviceAccountName: 'tenant',
    });
    const view = await stalled('host-key', 'HostKeyMismatch');
    const message = condition(view, 'Ready')?.message ?? '';
    expect(message).toContain(ssh().hostKeyFingerprint);
    expect(message).toContain(`not in known_hosts for [127.0.0.1]:${ssh().port}`);
    expect(await configMapData(c, namespace, 'host-key-config')).toBeUndefined();
  }, 90_000);

  it('stalls with AuthenticationFailed when the server refuses the key', async () => {
    const git = await repository('stranger');
    const stranger = await generateSshKey('ed25519');
    await createSecret('stranger-key', { identity: stranger.privateKey, known_hosts: ssh().knownHostsLine });
    const url = ssh().urlOf(git.repositoryDir);
    await createApplySet(c, namespace, 'stranger', {
      url,
      secretName: 'stranger-key',
      serviceAccountName: 'tenant',
    });
    const view = await stalled('stranger', 'AuthenticationFailed');
    expect(condition(view, 'Ready')?.message).toContain('the server refused the key');
  }, 90_000);

  it('cannot create an ssh source with a password in its URL: the API server refuses it', async () => {
    const error: unknown = await c.custom
      .createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        body: applySetBody(namespace, 'ssh-password', { url: 'ssh://git:hunter2@127.0.0.1/repo.git' }),
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 422 });
    expect(String((error as { body?: unknown }).body)).toContain('credentials must not be part of the URL');
  });
});

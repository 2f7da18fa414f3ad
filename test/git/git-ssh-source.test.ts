/**
 * The Git source over SSH against a real OpenSSH server (the system's sshd on loopback) serving the Git
 * server harness's repository: upload-pack over an SSH session, the host key always checked against
 * known_hosts, the key refused or not, and a repository the server does not have.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  GitHostKeyMismatchError,
  GitRepositoryNotFoundError,
  GitSourceNotAllowedError,
  GitSshAuthError,
} from '../../src/git/git-error.js';
import { createGitSource, type GitAuth } from '../../src/git/git-source.js';
import { guardedLookup } from '../../src/net/guarded-lookup.js';
import { freePort } from '../harness/api-get.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import {
  generateSshKey,
  startSshGitServer,
  type SshGitServer,
  type SshKeyPair,
} from '../harness/ssh-git-server.js';

const files = { 'deploy/config.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n' };

describe('the Git source over SSH', () => {
  let cacheDir: string;
  let git: GitTestServer;
  let sshd: SshGitServer;
  let key: SshKeyPair;

  beforeAll(async () => {
    [git, sshd, key] = await Promise.all([startGitServer({ files }), startSshGitServer(), generateSshKey()]);
    await sshd.authorize(key.publicKey);
  });
  afterAll(async () => {
    await Promise.all([git.close(), sshd.close()]);
  });
  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-ssh-source-test-'));
  });
  afterEach(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  const source = () => createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], timeoutMs: 30_000 });
  const auth = (
    overrides: Partial<{ identity: string; knownHosts: string; passphrase: string }> = {},
  ): GitAuth => ({
    identity: key.privateKey,
    knownHosts: `${sshd.knownHostsLine}\n`,
    from: 'Secret ns/deploy-key',
    ...overrides,
  });

  it('fetches a branch over ssh:// and then its new commit, and reads its manifests', async () => {
    const gitSource = source();
    const url = sshd.urlOf(git.repositoryDir);
    const first = await gitSource.fetch({ url, ref: { branch: 'main' }, auth: auth() });
    expect(first.commit).toBe(await git.revParse('main'));
    expect(await gitSource.readManifests({ url, commit: first.commit })).toEqual([
      { path: 'deploy/config.yaml', text: files['deploy/config.yaml'], byteLength: 56 },
    ]);
    const next = await git.writeFiles({
      'deploy/more.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n',
    });
    const second = await gitSource.fetch({ url, ref: { branch: 'main' }, auth: auth() });
    expect(second).toEqual({ revision: `main@sha1:${next}`, commit: next, fetched: true });
    const paths = (await gitSource.readManifests({ url, commit: next })).map((file) => file.path);
    expect(paths).toEqual(['deploy/config.yaml', 'deploy/more.yaml']);
  });

  it('fetches a tag and a commit', async () => {
    const gitSource = source();
    const sha = await git.revParse('main');
    await git.setTag('v1', sha, { annotated: true });
    const url = sshd.urlOf(git.repositoryDir);
    expect((await gitSource.fetch({ url, ref: { tag: 'v1' }, auth: auth() })).commit).toBe(sha);
    expect((await gitSource.fetch({ url, ref: { commit: sha }, auth: auth() })).commit).toBe(sha);
  });

  it('works with a passphrase-protected ECDSA key and refuses it with a wrong passphrase', async () => {
    const ecdsa = await generateSshKey('ecdsa', 'open sesame');
    await sshd.authorize(ecdsa.publicKey);
    const url = sshd.urlOf(git.repositoryDir);
    const fetched = await source().fetch({
      url,
      ref: { branch: 'main' },
      auth: auth({ identity: ecdsa.privateKey, passphrase: 'open sesame' }),
    });
    expect(fetched.commit).toBe(await git.revParse('main'));
    await expect(
      source().fetch({
        url,
        ref: { branch: 'main' },
        auth: auth({ identity: ecdsa.privateKey, passphrase: 'no' }),
      }),
    ).rejects.toBeInstanceOf(GitSshAuthError);
  });

  it('refuses a server whose host key is not in known_hosts, naming the key it showed', async () => {
    const other = await generateSshKey();
    const [type, blob] = other.publicKey.split(' ');
    const knownHosts = `[127.0.0.1]:${sshd.port} ${type} ${blob}\n`;
    const error = await source()
      .fetch({ url: sshd.urlOf(git.repositoryDir), ref: { branch: 'main' }, auth: auth({ knownHosts }) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHostKeyMismatchError);
    expect((error as Error).message).toContain(sshd.hostKeyFingerprint);
    expect((error as Error).message).toContain(`[127.0.0.1]:${sshd.port}`);
  });

  it('asks the server for the key type known_hosts lists: its ECDSA key, though it would show ed25519 first', async () => {
    const fetched = await source().fetch({
      url: sshd.urlOf(git.repositoryDir),
      ref: { branch: 'main' },
      auth: auth({ knownHosts: `${sshd.ecdsaKnownHostsLine}\n` }),
    });
    expect(fetched.commit).toBe(await git.revParse('main'));
  });

  it('says the key was refused when the server does not know it', async () => {
    const stranger = await generateSshKey();
    const error = await source()
      .fetch({
        url: sshd.urlOf(git.repositoryDir),
        ref: { branch: 'main' },
        auth: auth({ identity: stranger.privateKey }),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitSshAuthError);
    expect((error as GitSshAuthError).reason).toBe('AuthenticationFailed');
  });

  it('says the repository is not there, and needs a key and known_hosts at all', async () => {
    const url = sshd.urlOf(path.join(path.dirname(git.repositoryDir), 'missing.git'));
    await expect(source().fetch({ url, ref: { branch: 'main' }, auth: auth() })).rejects.toBeInstanceOf(
      GitRepositoryNotFoundError,
    );
    await expect(source().fetch({ url, ref: { branch: 'main' } })).rejects.toBeInstanceOf(GitSshAuthError);
  });

  it('applies the allowed source hosts to ssh hosts as to https ones', async () => {
    const url = sshd.urlOf(git.repositoryDir);
    const refused = createGitSource({ cacheDir, allowedHosts: ['git.example.com'] });
    await expect(refused.fetch({ url, ref: { branch: 'main' }, auth: auth() })).rejects.toBeInstanceOf(
      GitSourceNotAllowedError,
    );
    // No list: loopback stays refused, for ssh as for https.
    const open = createGitSource({ cacheDir });
    await expect(open.fetch({ url, ref: { branch: 'main' }, auth: auth() })).rejects.toBeInstanceOf(
      GitSourceNotAllowedError,
    );
  });

  it('resolves the host with the guarded lookup when connecting, and its key is looked up by that name', async () => {
    const lookup = guardedLookup(
      (hostname, _options, callback) =>
        callback(null, [{ address: hostname === 'git.test' ? '127.0.0.1' : '169.254.169.254', family: 4 }]),
      ['git.test', 'rebind.test'],
    );
    const gitSource = createGitSource({ cacheDir, lookup });
    const [, type, blob] = sshd.knownHostsLine.split(' ');
    const knownHosts = `[git.test]:${sshd.port} ${type} ${blob}\n`;
    const url = `ssh://${sshd.user}@git.test:${sshd.port}${git.repositoryDir}`;
    const fetched = await gitSource.fetch({ url, ref: { branch: 'main' }, auth: auth({ knownHosts }) });
    expect(fetched.commit).toBe(await git.revParse('main'));

    const rebound = `ssh://${sshd.user}@rebind.test:${sshd.port}${git.repositoryDir}`;
    const error = await gitSource
      .fetch({ url: rebound, ref: { branch: 'main' }, auth: auth() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitSourceNotAllowedError);
    expect((error as Error).message).toContain('rebind.test resolves to 169.254.169.254');
  });

  it('says the server is unreachable when nothing listens on its port', async () => {
    const port = await freePort();
    const url = `ssh://git@127.0.0.1:${port}${git.repositoryDir}`;
    await expect(source().fetch({ url, ref: { branch: 'main' }, auth: auth() })).rejects.toMatchObject({
      name: 'GitUnreachableError',
      detail: 'ECONNREFUSED',
    });
  });
});

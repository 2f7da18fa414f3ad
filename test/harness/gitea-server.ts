/**
 * A real Git forge for tests: Gitea, built from its Go module by scripts/build-gitea.sh, run on
 * 127.0.0.1 with SQLite in a temp dir. Tests use it as users do: users, organisations and private
 * repositories are created through its REST API, commits are pushed with `git push` over HTTP with a
 * user's token, Gitea sends its own signed push webhooks, and commit statuses are read back through the
 * API. Nothing of it is imitated.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { giteaIni } from './gitea-ini.js';
import { pushFiles, type PushedFiles } from './gitea-push.js';
import { startProcess, stopProcesses, tail, waitForProcess } from './start-process.js';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Gitea's first start migrates a new SQLite database: a few seconds, more on a loaded machine. */
const START_TIMEOUT_MS = 60_000;

export interface GiteaUser {
  readonly username: string;
  readonly password: string;
  /** An access token with every scope, usable as the password of Git over HTTP. */
  readonly token: string;
}

interface GiteaRepository {
  readonly owner: string;
  readonly name: string;
  /** `http://127.0.0.1:<port>/<owner>/<name>.git`, as Gitea's API gives it. */
  readonly cloneUrl: string;
}

interface GiteaCommitStatus {
  /** Gitea numbers the statuses of a repository as they come: their order. */
  readonly id: number;
  /** Gitea's API takes `state` when a status is posted and gives it back as `status`. */
  readonly status: 'pending' | 'success' | 'error' | 'failure' | 'warning';
  readonly context: string;
  readonly description: string;
  readonly target_url: string;
}

export interface GiteaServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  /** The site administrator, made by `gitea admin user create`. */
  readonly admin: GiteaUser;
  /** The temp dir holding the database, the repositories and the log. */
  readonly workDir: string;
  /** One REST call as `as` (default the admin), with its token; rejects on a status outside 2xx. */
  api<T>(method: string, apiPath: string, body?: unknown, as?: GiteaUser): Promise<T>;
  createUser(username: string): Promise<GiteaUser>;
  createOrganization(name: string, owner: GiteaUser): Promise<void>;
  /** A repository of `owner` (a user, or an organisation `as` belongs to); private unless said. */
  createRepository(
    owner: string,
    name: string,
    as: GiteaUser,
    options?: { readonly private?: boolean },
  ): Promise<GiteaRepository>;
  /** Writes `files` over the branch's tree, commits and `git push`es as `as`; returns the commit's sha. */
  push(repository: GiteaRepository, as: GiteaUser, files: PushedFiles, branch?: string): Promise<string>;
  /** A webhook of Gitea's own type, JSON, on push events, signed with `secret`; returns its id. */
  addWebhook(repository: GiteaRepository, url: string, secret: string, as: GiteaUser): Promise<number>;
  /** Every status of `sha`, as Gitea's API gives them. */
  commitStatuses(repository: GiteaRepository, sha: string, as: GiteaUser): Promise<GiteaCommitStatus[]>;
  /** Kills Gitea and removes its temp dir. */
  close(): Promise<void>;
}

/** The directory scripts/build-gitea.sh built Gitea into; a missing build fails the test file. */
async function giteaDir(): Promise<string> {
  try {
    const script = path.join(root, 'scripts/build-gitea.sh');
    const { stdout } = await execFileAsync('bash', [script, '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`Gitea is needed by this test and is not built (${detail})`, { cause: error });
  }
}

/** A port free a moment ago: Gitea must know its port before it listens, for its ROOT_URL. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

export async function startGiteaServer(): Promise<GiteaServer> {
  const binDir = await giteaDir();
  const gitea = path.join(binDir, 'gitea');
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'applyset-gitea-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = path.join(workDir, 'custom', 'conf', 'app.ini');
  await mkdir(path.dirname(config), { recursive: true });
  await mkdir(path.join(workDir, 'home'), { recursive: true });
  await writeFile(config, giteaIni({ workDir, staticRoot: binDir, port }));
  // Gitea and the git it runs see only this dir, never the machine's or the user's configuration.
  const env = {
    PATH: process.env.PATH,
    HOME: path.join(workDir, 'home'),
    GIT_CONFIG_NOSYSTEM: '1',
    GITEA_WORK_DIR: workDir,
    LANG: 'C',
  };
  const common = ['--config', config, '--work-path', workDir, '--custom-path', path.join(workDir, 'custom')];

  // The database is migrated and the admin made before the web process starts, so it starts on a
  // ready database and the two never write to the SQLite file at once.
  const admin = { username: 'forge-admin', password: randomBytes(12).toString('hex') };
  const prepare = async (args: readonly string[]) =>
    execFileAsync(gitea, [...args, ...common], { env, timeout: START_TIMEOUT_MS });
  try {
    await prepare(['migrate']);
    await prepare([
      'admin',
      'user',
      'create',
      '--username',
      admin.username,
      '--password',
      admin.password,
      '--email',
      'forge-admin@example.test',
      '--admin',
      '--must-change-password=false',
    ]);
  } catch (error) {
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }

  const log = path.join(workDir, 'gitea.log');
  const child = startProcess(gitea, ['web', ...common], log, process.pid, env);
  const exited = () =>
    child.exitCode === null && child.signalCode === null
      ? undefined
      : `exit ${child.exitCode ?? child.signalCode}`;
  const close = async () => {
    await stopProcesses([child]);
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    await waitForProcess(
      'gitea',
      async () => (await fetch(`${url}/api/healthz`)).ok,
      START_TIMEOUT_MS,
      exited,
    );
  } catch (error) {
    const logTail = await tail(log);
    await close();
    throw new Error(`gitea did not start: ${String(error)}\n${logTail}`, { cause: error });
  }

  const basic = (user: { username: string; password: string }) =>
    `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const request = async <T>(method: string, apiPath: string, authorization: string, body?: unknown) => {
    const response = await fetch(`${url}/api/v1${apiPath}`, {
      method,
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`gitea ${method} ${apiPath}: HTTP ${response.status}: ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  // A token is made with the user's password (Gitea allows nothing else for this call).
  const tokenFor = async (user: { username: string; password: string }) =>
    (
      await request<{ sha1: string }>('POST', `/users/${user.username}/tokens`, basic(user), {
        name: `test-${randomBytes(4).toString('hex')}`,
        scopes: ['all'],
      })
    ).sha1;
  const adminUser: GiteaUser = { ...admin, token: await tokenFor(admin) };
  const api = <T>(method: string, apiPath: string, body?: unknown, as: GiteaUser = adminUser) =>
    request<T>(method, apiPath, `token ${as.token}`, body);

  return {
    url,
    admin: adminUser,
    workDir,
    api,
    async createUser(username) {
      const password = randomBytes(12).toString('hex');
      await api('POST', '/admin/users', {
        username,
        password,
        email: `${username}@example.test`,
        must_change_password: false,
      });
      return { username, password, token: await tokenFor({ username, password }) };
    },
    async createOrganization(name, owner) {
      await api('POST', '/orgs', { username: name, visibility: 'private' }, owner);
    },
    async createRepository(owner, name, as, options = {}) {
      const body = { name, private: options.private ?? true, default_branch: 'main', auto_init: false };
      const created = await api<{ clone_url: string }>(
        'POST',
        owner === as.username ? '/user/repos' : `/orgs/${owner}/repos`,
        body,
        as,
      );
      return { owner, name, cloneUrl: created.clone_url };
    },
    push: (repository, as, files, branch = 'main') =>
      pushFiles(path.join(workDir, 'clients'), repository.cloneUrl, as, files, branch),
    async addWebhook(repository, hookUrl, secret, as) {
      const hook = await api<{ id: number }>(
        'POST',
        `/repos/${repository.owner}/${repository.name}/hooks`,
        {
          type: 'gitea',
          active: true,
          events: ['push'],
          config: { url: hookUrl, content_type: 'json', secret },
        },
        as,
      );
      return hook.id;
    },
    commitStatuses: (repository, sha, as) =>
      api<GiteaCommitStatus[]>(
        'GET',
        `/repos/${repository.owner}/${repository.name}/commits/${sha}/statuses`,
        undefined,
        as,
      ),
    close,
  };
}

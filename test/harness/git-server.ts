/**
 * A real Git server for tests: a bare repository in a temp dir, served over the smart HTTP protocol by the
 * system `git http-backend` (CGI) behind a small `node:http` wrapper on 127.0.0.1, optionally behind HTTP
 * basic auth. Tests change the repository while it is served (commit trees, edit and delete files, create
 * and move branches and tags) with the `git` CLI's plumbing, so no working tree is involved and every
 * change is one atomic ref update, as a push would be.
 *
 * Commits use a fixed author and committer with a clock that advances one second per commit, so a test
 * run produces the same shas every time.
 */
import type { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createBackendHandler, type GitServerAuth, type GitServerRequest } from './git-http-backend.js';
import { runGit } from './run-git.js';

/** Repository path → file content. A path with '/' creates directories. */
export type FileTree = Readonly<Record<string, string | Uint8Array>>;

export interface GitServerOptions {
  /** The first commit's tree on `branch`. Omit for an empty repository (no commits, no refs). */
  readonly files?: FileTree;
  /** Default `main`; also the repository's HEAD. */
  readonly branch?: string;
  /** The repository's path on the server; default `repo.git`. */
  readonly repositoryName?: string;
  /** When set, every request needs these credentials (HTTP basic), or ones the check accepts. */
  readonly auth?: GitServerAuth;
  /** Serve HTTPS with this certificate; with `clientCa`, only to clients whose certificate it signed (mTLS). */
  readonly tls?: { readonly cert: string; readonly key: string; readonly clientCa?: string };
}

interface ChangeOptions {
  /** Default: the server's default branch. The branch is created when it does not exist. */
  readonly branch?: string;
  readonly message?: string;
}

interface TagOptions {
  /** An annotated tag object instead of a lightweight ref. */
  readonly annotated?: boolean;
  readonly message?: string;
}

interface GitServerHold {
  /** Requests waiting to be answered. */
  waiting(): number;
  /** Answers the held requests and stops holding. */
  release(): void;
}

export interface GitTestServer {
  /** `http://127.0.0.1:<port>/<repositoryName>`, without credentials. Stays the same across goOffline/goOnline. */
  readonly url: string;
  /** The same URL with the credentials in its userinfo (or `url` when auth is off). */
  readonly urlWithCredentials: string;
  readonly defaultBranch: string;
  /** The bare repository on disk. */
  readonly repositoryDir: string;
  /** Every answered request, oldest first. */
  readonly requests: readonly GitServerRequest[];
  /** Replaces the whole tree of `branch` with `files` in a new commit; returns its sha. */
  commitTree(files: FileTree, options?: ChangeOptions): Promise<string>;
  /** Adds or overwrites `files`, keeping the rest of the tree; returns the new commit's sha. */
  writeFiles(files: FileTree, options?: ChangeOptions): Promise<string>;
  /** Removes `paths` from the tree; returns the new commit's sha. */
  deleteFiles(paths: readonly string[], options?: ChangeOptions): Promise<string>;
  /**
   * Stores `content` as an object of `type` exactly as given (`git hash-object --literally`), unchecked:
   * for crafted trees git's own commands refuse to write (duplicate names, `/` in a name, odd modes).
   */
  writeObject(type: 'blob' | 'tree', content: string | Uint8Array): Promise<string>;
  /** Commits the tree object `tree` on top of `branch` and moves the branch there; returns the commit's sha. */
  commitTreeObject(tree: string, options?: ChangeOptions): Promise<string>;
  /** Points `branch` at `target` (a sha, branch or tag), creating or force-moving it; returns the sha. */
  setBranch(branch: string, target: string): Promise<string>;
  deleteBranch(branch: string): Promise<void>;
  /** Creates or force-moves `tag` to `target`; returns the sha of the commit it names. */
  setTag(tag: string, target: string, options?: TagOptions): Promise<string>;
  deleteTag(tag: string): Promise<void>;
  /** The commit sha `ref` names (`git rev-parse ref^{commit}`). */
  revParse(ref: string): Promise<string>;
  /** Stops listening and drops open connections, keeping the URL and the repository: clients get ECONNREFUSED. */
  goOffline(): Promise<void>;
  /** Listens again on the same port. */
  goOnline(): Promise<void>;
  /**
   * Holds every request that arrives from now on, unanswered, until `release()`: a slow server, for
   * tests of timeouts and aborts that must catch a client mid-fetch.
   */
  hold(): GitServerHold;
  /** Stops the server and removes its temp dir. */
  close(): Promise<void>;
}

const BASE_TIME_SECONDS = 1_700_000_000;

export async function startGitServer(options: GitServerOptions = {}): Promise<GitTestServer> {
  const defaultBranch = options.branch ?? 'main';
  const repositoryName = options.repositoryName ?? 'repo.git';
  const root = await mkdtemp(path.join(os.tmpdir(), 'applyset-git-server-'));
  const projectRoot = path.join(root, 'repositories');
  const repositoryDir = path.join(projectRoot, repositoryName);
  const home = path.join(root, 'home');
  await mkdir(repositoryDir, { recursive: true });
  await mkdir(home, { recursive: true });

  // Isolated from the machine's and the user's git configuration, so tests behave the same everywhere.
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'),
    LANG: 'C',
    LC_ALL: 'C',
  };
  let commitCount = 0;
  let indexCount = 0;

  const git = (args: readonly string[], input?: string | Uint8Array, env: NodeJS.ProcessEnv = {}) =>
    runGit(args, { cwd: repositoryDir, env: { ...baseEnv, GIT_DIR: repositoryDir, ...env }, input });

  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`]);

  const identityEnv = (): NodeJS.ProcessEnv => {
    commitCount += 1;
    const date = `${BASE_TIME_SECONDS + commitCount} +0000`;
    return {
      GIT_AUTHOR_NAME: 'Test Author',
      GIT_AUTHOR_EMAIL: 'author@example.test',
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: 'Test Committer',
      GIT_COMMITTER_EMAIL: 'committer@example.test',
      GIT_COMMITTER_DATE: date,
    };
  };

  const currentCommit = async (branch: string): Promise<string | undefined> => {
    const { stdout } = await git(['for-each-ref', '--format=%(objectname)', `refs/heads/${branch}`]);
    const sha = stdout.trim();
    return sha === '' ? undefined : sha;
  };

  /**
   * Builds a tree in a private index (starting empty or from the branch's tree), commits it with the
   * branch tip as parent and moves the branch with compare-and-swap, like a fast-forward push.
   */
  const change = async (
    edit: { readonly replace: boolean; readonly write: FileTree; readonly remove: readonly string[] },
    changeOptions: ChangeOptions,
  ): Promise<string> => {
    const branch = changeOptions.branch ?? defaultBranch;
    const parent = await currentCommit(branch);
    indexCount += 1;
    const indexEnv = { GIT_INDEX_FILE: path.join(root, `index-${indexCount}`) };
    if (edit.replace || parent === undefined) await git(['read-tree', '--empty'], undefined, indexEnv);
    else await git(['read-tree', parent], undefined, indexEnv);
    // `update-index --index-info` edits the index without a work tree: mode 0 removes a path.
    const lines: string[] = [];
    for (const [file, content] of Object.entries(edit.write)) {
      const { stdout } = await git(['hash-object', '-w', '--stdin'], content);
      lines.push(`100644 ${stdout.trim()}\t${file}`);
    }
    for (const file of edit.remove) lines.push(`0 ${'0'.repeat(40)}\t${file}`);
    if (lines.length > 0) await git(['update-index', '--index-info'], `${lines.join('\n')}\n`, indexEnv);
    const tree = (await git(['write-tree'], undefined, indexEnv)).stdout.trim();
    await rm(indexEnv.GIT_INDEX_FILE, { force: true });
    return commitOnto(branch, parent, tree, changeOptions.message);
  };

  /** Commits `tree` with `parent` (the branch tip) as parent and moves the branch with compare-and-swap. */
  const commitOnto = async (
    branch: string,
    parent: string | undefined,
    tree: string,
    givenMessage: string | undefined,
  ): Promise<string> => {
    const message = givenMessage ?? `change ${commitCount + 1}`;
    const parentArgs = parent === undefined ? [] : ['-p', parent];
    const commit = (
      await git(['commit-tree', tree, ...parentArgs, '-m', message], undefined, identityEnv())
    ).stdout.trim();
    await git(['update-ref', `refs/heads/${branch}`, commit, parent ?? '']);
    return commit;
  };

  const revParse = async (ref: string): Promise<string> =>
    (await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).stdout.trim();

  if (options.files !== undefined) {
    await change({ replace: true, write: options.files, remove: [] }, { message: 'initial commit' });
  }

  const requests: GitServerRequest[] = [];
  const children = new Set<ReturnType<typeof spawn>>();
  const handler = createBackendHandler({
    projectRoot,
    baseEnv,
    auth: options.auth,
    onChild: (child) => {
      children.add(child);
      child.once('close', () => children.delete(child));
    },
    onRequest: (request) => requests.push(request),
  });

  let held: (() => void)[] | undefined;
  const gate: http.RequestListener = (req, res) => {
    if (held === undefined) handler(req, res);
    else held.push(() => handler(req, res));
  };

  const serve = () =>
    options.tls === undefined
      ? http.createServer(gate)
      : https.createServer({ ...options.tls, ...clientCertificates(options.tls.clientCa) }, gate);
  let server = serve();
  await listen(server, 0);
  const port = (server.address() as AddressInfo).port;
  let online = true;

  const scheme = options.tls === undefined ? 'http' : 'https';
  const url = `${scheme}://127.0.0.1:${port}/${repositoryName}`;
  const urlWithCredentials =
    options.auth === undefined || 'accepts' in options.auth
      ? url
      : `${scheme}://${encodeURIComponent(options.auth.username)}:${encodeURIComponent(options.auth.password)}@127.0.0.1:${port}/${repositoryName}`;

  const goOffline = async (): Promise<void> => {
    if (!online) return;
    online = false;
    for (const child of children) child.kill('SIGKILL');
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };

  return {
    url,
    urlWithCredentials,
    defaultBranch,
    repositoryDir,
    requests,
    commitTree: (files, changeOptions = {}) =>
      change({ replace: true, write: files, remove: [] }, changeOptions),
    writeFiles: (files, changeOptions = {}) =>
      change({ replace: false, write: files, remove: [] }, changeOptions),
    deleteFiles: (paths, changeOptions = {}) =>
      change({ replace: false, write: {}, remove: paths }, changeOptions),
    writeObject: async (type, content) =>
      (await git(['hash-object', '-t', type, '--literally', '-w', '--stdin'], content)).stdout.trim(),
    commitTreeObject: async (tree, changeOptions = {}) => {
      const branch = changeOptions.branch ?? defaultBranch;
      return commitOnto(branch, await currentCommit(branch), tree, changeOptions.message);
    },
    setBranch: async (branch, target) => {
      const sha = await revParse(target);
      await git(['update-ref', `refs/heads/${branch}`, sha]);
      return sha;
    },
    deleteBranch: async (branch) => {
      await git(['update-ref', '-d', `refs/heads/${branch}`]);
    },
    setTag: async (tag, target, tagOptions = {}) => {
      const sha = await revParse(target);
      if (tagOptions.annotated === true) {
        await git(
          ['tag', '--force', '-a', tag, sha, '-m', tagOptions.message ?? tag],
          undefined,
          identityEnv(),
        );
      } else {
        await git(['update-ref', `refs/tags/${tag}`, sha]);
      }
      return sha;
    },
    deleteTag: async (tag) => {
      await git(['update-ref', '-d', `refs/tags/${tag}`]);
    },
    revParse,
    hold: () => {
      const queue: (() => void)[] = [];
      held = queue;
      return {
        waiting: () => queue.length,
        release: () => {
          if (held === queue) held = undefined;
          for (const answer of queue.splice(0)) answer();
        },
      };
    },
    goOffline,
    goOnline: async () => {
      if (online) return;
      server = serve();
      await listen(server, port);
      online = true;
    },
    close: async () => {
      await goOffline();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * The files under `dir` as a FileTree (paths relative to `dir`, '/'-separated), to serve a directory such
 * as `examples/guestbook` as a repository. Symbolic links and other special files are left out.
 */
export async function readFileTree(dir: string): Promise<FileTree> {
  const tree: Record<string, Uint8Array> = {};
  const walk = async (absolute: string, relative: string): Promise<void> => {
    for (const entry of await readdir(absolute, { withFileTypes: true })) {
      const entryPath = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(path.join(absolute, entry.name), entryPath);
      else if (entry.isFile()) tree[entryPath] = await readFile(path.join(absolute, entry.name));
    }
  };
  await walk(dir, '');
  return tree;
}

/** With a CA: every client must present a certificate it signed, or the handshake fails. */
function clientCertificates(ca: string | undefined): https.ServerOptions {
  return ca === undefined ? {} : { ca, requestCert: true, rejectUnauthorized: true };
}

function listen(server: http.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

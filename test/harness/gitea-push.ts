import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runGit } from './run-git.js';

/** Repository path → file content; a path with '/' creates directories. */
export type PushedFiles = Readonly<Record<string, string>>;

let commitCount = 0;

/**
 * Commits `files` on `branch` of a working clone kept under `clientsDir` (made on first use) and
 * pushes it with `git push` over HTTP as `user`, whose token is the password: the same authentication
 * a person or a CI job uses, checked by Gitea. Returns the pushed commit's sha.
 */
export async function pushFiles(
  clientsDir: string,
  cloneUrl: string,
  user: { readonly username: string; readonly token: string },
  files: PushedFiles,
  branch: string,
): Promise<string> {
  const dir = path.join(clientsDir, new URL(cloneUrl).pathname.replace(/[^A-Za-z0-9._-]/g, '_'));
  const home = path.join(clientsDir, '.home');
  await mkdir(home, { recursive: true });
  commitCount += 1;
  const date = `${1_700_000_000 + commitCount} +0000`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'),
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_AUTHOR_NAME: user.username,
    GIT_AUTHOR_EMAIL: `${user.username}@example.test`,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: user.username,
    GIT_COMMITTER_EMAIL: `${user.username}@example.test`,
    GIT_COMMITTER_DATE: date,
  };
  const git = (args: readonly string[]) => runGit(args, { cwd: dir, env, input: undefined });
  await mkdir(dir, { recursive: true });
  await git(['init', '--quiet', `--initial-branch=${branch}`]);
  // The clone is kept: a later push of the same branch builds on what was committed here before.
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  await git(['add', '--all']);
  await git(['commit', '--quiet', '--allow-empty', '-m', `push ${commitCount}`]);
  const remote = new URL(cloneUrl);
  remote.username = user.username;
  remote.password = user.token;
  await git(['push', '--quiet', remote.toString(), `HEAD:refs/heads/${branch}`]);
  return (await git(['rev-parse', 'HEAD'])).stdout.trim();
}

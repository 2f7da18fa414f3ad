import type { NotificationState } from './notification-event.js';

/** The states every forge knows, as a commit status carries them. */
export type CommitState = 'pending' | 'success' | 'failure' | 'error';

/**
 * One mark on one commit.
 * @internal test seam: the unit tests build the requests of a status they describe
 */
export interface CommitStatus {
  readonly sha: string;
  readonly state: CommitState;
  /** Names the cluster and the ApplySet, so two clusters applying one commit mark it twice. */
  readonly context: string;
  /** The reason, short: forges cut it (GitHub at 140 characters). */
  readonly description: string;
  readonly targetUrl?: string;
}

/** One HTTP request, built without sending it, so its shape can be tested alone. */
interface ForgeRequest {
  readonly method: 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A forge that takes commit statuses: the request for one status on one repository. */
export interface CommitStatusProvider {
  readonly kind: 'github' | 'gitlab' | 'gitea';
  request(status: CommitStatus): ForgeRequest;
}

const DESCRIPTION_LIMIT = 140;

function short(description: string): string {
  return description.length <= DESCRIPTION_LIMIT
    ? description
    : `${description.slice(0, DESCRIPTION_LIMIT - 1)}…`;
}

function apiBase(address: string): string {
  return address.replace(/\/+$/, '');
}

/** GitHub: `POST /repos/{owner}/{repo}/statuses/{sha}` (address: https://api.github.com). */
export function githubStatuses(address: string, repository: string, token: string): CommitStatusProvider {
  const [owner, repo] = ownerAndRepo(repository).map(encodeURIComponent);
  return {
    kind: 'github',
    request: (status) => ({
      method: 'POST',
      url: `${apiBase(address)}/repos/${owner}/${repo}/statuses/${status.sha}`,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        state: status.state,
        context: status.context,
        description: short(status.description),
        ...(status.targetUrl === undefined ? {} : { target_url: status.targetUrl }),
      }),
    }),
  };
}

/** GitLab names failure and error alike `failed`, and the context `name`. */
const GITLAB_STATES: Record<CommitState, string> = {
  pending: 'pending',
  success: 'success',
  failure: 'failed',
  error: 'failed',
};

/** GitLab: `POST /api/v4/projects/{id}/statuses/{sha}`, the id being the URL-encoded project path. */
export function gitlabStatuses(address: string, repository: string, token: string): CommitStatusProvider {
  const project = encodeURIComponent(ownerAndRepo(repository).join('/'));
  return {
    kind: 'gitlab',
    request: (status) => ({
      method: 'POST',
      url: `${apiBase(address)}/api/v4/projects/${project}/statuses/${status.sha}`,
      headers: { 'private-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({
        state: GITLAB_STATES[status.state],
        name: status.context,
        description: short(status.description),
        ...(status.targetUrl === undefined ? {} : { target_url: status.targetUrl }),
      }),
    }),
  };
}

/** Gitea and Forgejo: `POST /api/v1/repos/{owner}/{repo}/statuses/{sha}`. */
export function giteaStatuses(address: string, repository: string, token: string): CommitStatusProvider {
  const [owner, repo] = ownerAndRepo(repository).map(encodeURIComponent);
  return {
    kind: 'gitea',
    request: (status) => ({
      method: 'POST',
      url: `${apiBase(address)}/api/v1/repos/${owner}/${repo}/statuses/${status.sha}`,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        state: status.state,
        context: status.context,
        description: short(status.description),
        ...(status.targetUrl === undefined ? {} : { target_url: status.targetUrl }),
      }),
    }),
  };
}

/**
 * `owner/repo` (GitLab: `group/subgroup/repo`) from a repository URL or path: the source URL of an
 * ApplySet, with `.git` and credentials dropped.
 */
export function ownerAndRepo(repository: string): [string, string] {
  const path = /^[a-z][a-z0-9+.-]*:\/\//i.test(repository)
    ? new URL(repository).pathname
    : repository.replace(/^[^@]+@[^:]+:/, '');
  const parts = path
    .replace(/\.git$/, '')
    .split('/')
    .filter((part) => part !== '');
  if (parts.length < 2) throw new Error(`not an owner/repository path: ${path}`);
  const repo = parts[parts.length - 1] ?? '';
  return [parts.slice(0, -1).join('/'), repo];
}

/** The commit status a state stands for: pending while applying, success when Ready, else failure. */
export function commitStateOf(state: NotificationState): CommitState | undefined {
  switch (state) {
    case 'progressing':
      return 'pending';
    case 'applied':
    case 'recovered':
      return 'success';
    case 'failed':
    case 'healthTimeout':
    case 'stalled':
      return 'failure';
    case 'pruneWaiting':
      return 'pending';
    default:
      // Drift and fights are about the cluster, not about the commit.
      return undefined;
  }
}

/** `applyset/<cluster>/<namespace>/<name>`: one context per cluster and ApplySet. */
export function commitStatusContext(cluster: string, namespace: string, name: string): string {
  return `applyset/${cluster}/${namespace}/${name}`;
}

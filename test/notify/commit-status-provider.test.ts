import {
  commitStateOf,
  commitStatusContext,
  giteaStatuses,
  githubStatuses,
  gitlabStatuses,
  type CommitStatus,
} from '../../src/notify/commit-status-provider.js';

const status: CommitStatus = {
  sha: 'a'.repeat(40),
  state: 'failure',
  context: commitStatusContext('prod', 'team-a', 'web'),
  description: `ApplyFailed: ${'x'.repeat(300)}`,
};

describe('commit status providers', () => {
  test('GitHub: POST /repos/{owner}/{repo}/statuses/{sha} with a bearer token', () => {
    const request = githubStatuses(
      'https://api.github.com/',
      'https://github.com/acme/deploy.git',
      't0k',
    ).request(status);
    expect(request.url).toBe(`https://api.github.com/repos/acme/deploy/statuses/${status.sha}`);
    expect(request.headers['authorization']).toBe('Bearer t0k');
    const body = JSON.parse(request.body) as Record<string, string>;
    expect(body).toMatchObject({ state: 'failure', context: 'applyset/prod/team-a/web' });
    expect(body['description']?.length).toBeLessThanOrEqual(140);
  });

  test('GitLab: POST /api/v4/projects/{encoded path}/statuses/{sha}, failure as failed, context as name', () => {
    const request = gitlabStatuses(
      'https://gitlab.example',
      'git@gitlab.example:group/sub/deploy.git',
      't0k',
    ).request(status);
    expect(request.url).toBe(
      `https://gitlab.example/api/v4/projects/group%2Fsub%2Fdeploy/statuses/${status.sha}`,
    );
    expect(request.headers['private-token']).toBe('t0k');
    expect(JSON.parse(request.body)).toMatchObject({ state: 'failed', name: 'applyset/prod/team-a/web' });
  });

  test('Gitea and Forgejo: POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with a token header', () => {
    const request = giteaStatuses('http://gitea:3000', 'http://gitea:3000/acme/deploy', 't0k').request({
      ...status,
      state: 'pending',
    });
    expect(request.url).toBe(`http://gitea:3000/api/v1/repos/acme/deploy/statuses/${status.sha}`);
    expect(request.headers['authorization']).toBe('token t0k');
    expect(JSON.parse(request.body)).toMatchObject({ state: 'pending', context: 'applyset/prod/team-a/web' });
  });

  test('pending while applying, success when Ready, failure with the reason; drift marks no commit', () => {
    expect(commitStateOf('progressing')).toBe('pending');
    expect(commitStateOf('recovered')).toBe('success');
    expect(commitStateOf('healthTimeout')).toBe('failure');
    expect(commitStateOf('driftDetected')).toBeUndefined();
  });
});

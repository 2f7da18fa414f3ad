import type { ApplySet } from '../../src/api/applyset-types.js';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { failedHookJobs } from '../../src/ui/failed-hook-jobs.js';
import {
  failedContainer,
  newestPod,
  noLogReason,
  readHookJobLogs,
  type HookJobLog,
} from '../../src/ui/hook-job-logs.js';
import { lastLogLines } from '../../src/ui/log-lines.js';
import { renderApplySetBody } from '../../src/ui/render-applyset-page.js';

// Issue #38: the web view shows the last lines of each failed hook Job's newest Pod, cleaned and escaped,
// or why there are none, naming the Job.

const failedSet = (message: string): ApplySet => ({
  apiVersion: 'applyset.dev/v1alpha1',
  kind: 'ApplySet',
  metadata: { namespace: 'team-a', name: 'app' },
  spec: { source: { url: 'https://git.example/repo.git', ref: { branch: 'main' } }, prune: true },
  status: {
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'HookFailed',
        message,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  },
});

const pod = (name: string, created: string, statuses: JsonObject[] = []): JsonObject => ({
  metadata: { name, creationTimestamp: created },
  spec: { containers: [{ name: 'setup' }, { name: 'main' }] },
  status: { containerStatuses: statuses },
});

describe('the failed hook Jobs of the last run', () => {
  it('are the Jobs the HookFailed message names, each once, not its other hooks', () => {
    const set = failedSet(
      'PreSync hook job.batch/migrate -n team-a failed: Failed: Job has failed: BackoffLimitExceeded; ' +
        'PreSync hook pod/check -n team-a failed: Failed: x; ' +
        'PreSync hook job.batch/seed.v2 -n team-b failed: did not finish within spec.timeout (InProgress: ); ' +
        'PreSync hook job.batch/migrate -n team-a failed: again',
    );
    expect(failedHookJobs(set)).toEqual([
      { phase: 'PreSync', namespace: 'team-a', name: 'migrate' },
      { phase: 'PreSync', namespace: 'team-b', name: 'seed.v2' },
    ]);
  });

  it('are none when the set did not fail on a hook', () => {
    const set = failedSet('PostSync hook job.batch/smoke -n team-a failed: x');
    const ready = { ...set.status!.conditions![0]!, reason: 'HealthCheckFailed' };
    expect(failedHookJobs({ ...set, status: { conditions: [ready] } })).toEqual([]);
  });
});

describe("a hook Pod's log lines", () => {
  it('are the last 10, a final newline adding none', () => {
    const text = Array.from({ length: 15 }, (_, index) => `line ${index + 1}`).join('\n') + '\n';
    expect(lastLogLines(text, 10)).toEqual(Array.from({ length: 10 }, (_, index) => `line ${index + 6}`));
  });

  it('lose colours, titles, cursor moves, what a carriage return overwrote and other controls', () => {
    const text = [
      '\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m',
      '\x1b]0;a title\x07after title',
      'progress 10%\rprogress 100%',
      'windows line\r',
      'bell\x07 back\x08 nul\x00 c1\x9b tab\tkept',
      'rtl \u202eevil\u202c done',
    ].join('\n');
    expect(lastLogLines(text, 10)).toEqual([
      'red and bold green',
      'after title',
      'progress 100%',
      'windows line',
      'bell back nul c1 tab\tkept',
      'rtl evil done',
    ]);
  });
});

describe("a hook Job's Pod and container", () => {
  it('is the newest Pod by creationTimestamp', () => {
    const pods = [
      pod('smoke-aaaaa', '2026-01-01T10:00:00Z'),
      pod('smoke-ccccc', '2026-01-01T10:02:00Z'),
      pod('smoke-bbbbb', '2026-01-01T10:01:00Z'),
    ];
    expect(newestPod(pods)?.['metadata']).toMatchObject({ name: 'smoke-ccccc' });
    expect(newestPod([])).toBeUndefined();
  });

  it('is the container that exited non-zero, else the first', () => {
    const failed = pod('p', '2026-01-01T10:00:00Z', [
      { name: 'setup', state: { terminated: { exitCode: 0 } } },
      { name: 'main', state: { terminated: { exitCode: 1 } } },
    ]);
    expect(failedContainer(failed)).toBe('main');
    expect(failedContainer(pod('p', '2026-01-01T10:00:00Z'))).toBe('setup');
  });
});

describe('why no log is shown', () => {
  const step = {
    permission: 'get pods/log in namespace team-a',
    notFound: 'its Pod p no longer exists',
    otherwise: (detail: string) => `its Pod p has no log yet, or its node cannot be reached: ${detail}`,
  };

  it('names the permission a refusal lacked', () => {
    const error = new KubeApiError(
      'GET',
      '/x',
      403,
      'Forbidden',
      'pods "p" is forbidden: User "u" cannot get resource "pods/log"',
    );
    expect(noLogReason(error, step)).toMatch(
      /^forbidden: .* may not get pods\/log in namespace team-a: pods "p" is forbidden/,
    );
  });

  it("says what a 404 means, and the API server's words for the rest", () => {
    expect(noLogReason(new KubeApiError('GET', '/x', 404, 'NotFound', 'gone'), step)).toBe(
      'its Pod p no longer exists',
    );
    const unreachable =
      'Get "https://10.0.0.2:10250/containerLogs/team-a/p/main": dial tcp 10.0.0.2:10250: connect: connection refused';
    expect(noLogReason(new KubeApiError('GET', '/x', 500, 'InternalError', unreachable), step)).toBe(
      `its Pod p has no log yet, or its node cannot be reached: ${unreachable}`,
    );
  });

  it('reads at most 5 Jobs, and says so of the others and where the view reads none', async () => {
    const jobs = Array.from({ length: 7 }, (_, index) => ({
      phase: 'PostSync',
      namespace: 'ns',
      name: `j${index}`,
    }));
    const logs = await readHookJobLogs(jobs, 'not read here');
    expect(logs.map((log) => ('noLog' in log ? log.noLog : ''))).toEqual([
      ...Array<string>(5).fill('not read here'),
      'not read: a page reads the first 5 only',
      'not read: a page reads the first 5 only',
    ]);
  });
});

describe('the page', () => {
  const render = (hookLogs: HookJobLog[]) =>
    renderApplySetBody({
      applySet: failedSet('PostSync hook job.batch/smoke -n team-a failed: Failed: Job has failed'),
      objects: [],
      totalObjects: 0,
      events: [],
      dependencies: [],
      dependents: [],
      preview: { kind: 'unavailable', reason: 'none' },
      hookLogs,
      nowMs: Date.parse('2026-01-01T00:01:00Z'),
    }).text;

  it("shows a log's lines as text: markup in them is escaped", () => {
    const page = render([
      {
        phase: 'PostSync',
        namespace: 'team-a',
        name: 'smoke',
        pod: 'smoke-x1',
        container: 'main',
        lines: ['<script>alert(1)</script>', 'smoke test failed & "quoted"'],
      },
    ]);
    expect(page).toContain('Log of job.batch/smoke -n team-a');
    expect(page).toMatch(/Pod <code>smoke-x1<\/code>, container\s+<code>main<\/code>/);
    expect(page).toContain(
      '<pre class="log"><code>&lt;script&gt;alert(1)&lt;/script&gt;\nsmoke test failed &amp; &quot;quoted&quot;</code></pre>',
    );
    expect(page).not.toContain('<script>');
  });

  it('names the Job when it shows why there is no log', () => {
    const page = render([
      { phase: 'PostSync', namespace: 'team-a', name: 'smoke', noLog: 'the Job has no Pod: <none>' },
    ]);
    expect(page).toContain('No log of job.batch/smoke -n team-a: the Job has no Pod: &lt;none&gt;');
  });
});

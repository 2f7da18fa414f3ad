import { PassThrough } from 'node:stream';
import { ApplySetInputRejectedError } from '../../src/apply/apply-set-input-error.js';
import { failureOutcome } from '../../src/reconcile/failure-outcome.js';
import { GitAuthError } from '../../src/git/git-error.js';
import { createLogger } from '../../src/observability/create-logger.js';
import type { ResolvedApplySetSpec } from '../../src/api/applyset-types.js';

const revision = 'main@sha1:0123abc';
const url = 'https://git.example.com/team/repo.git';

/** The controller's own logger, its JSON lines kept. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new PassThrough();
  sink.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n'))
      if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { log: createLogger({ destination: sink }), lines };
}

describe('failureOutcome', () => {
  it('logs an error that is no IntentError as a bug, with its stack, and reports the step that failed', async () => {
    const { log, lines } = recordingLogger();
    const bug = new TypeError("Cannot read properties of undefined (reading 'items')");
    const outcome = failureOutcome(bug, { step: 'apply', revision, timedOut: false }, log);
    expect(outcome).toEqual({ kind: 'retryable', reason: 'ApplyFailed', message: bug.message, revision });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      reason: 'ApplyFailed',
      msg: expect.stringContaining('a bug') as unknown,
    });
    expect((lines[0]?.['err'] as { stack?: string }).stack).toContain('TypeError: Cannot read properties');
  });

  it('logs nothing for the failures the errors themselves describe, and gives them the revision and objects', async () => {
    const { log, lines } = recordingLogger();
    const spec = { source: { url, path: '', secretName: 'git-token' } } as unknown as ResolvedApplySetSpec;
    expect(failureOutcome(new GitAuthError(url, 401), { step: 'fetch', spec }, log)).toEqual({
      kind: 'stalled',
      reason: 'AuthenticationFailed',
      message: `authentication failed for ${url} (HTTP 401): check username/password or token in Secret git-token`,
    });
    expect(
      failureOutcome(
        new ApplySetInputRejectedError(['the set is empty']),
        { step: 'apply', revision, timedOut: false },
        log,
      ),
    ).toEqual({
      kind: 'stalled',
      reason: 'InvalidManifests',
      message: `revision ${revision} was refused, nothing was changed: the set is empty`,
      revision,
      errors: [{ object: '', message: 'the set is empty' }],
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([]);
  });
});

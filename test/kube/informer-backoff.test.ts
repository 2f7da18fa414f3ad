import {
  afterWatchFailure,
  informerRetryDelayMs,
  isShortWatch,
  MAX_RETRY_MS,
  missingCollectionJudge,
} from '../../src/kube/informer-backoff.js';
import { KubeApiError, KubeTransportError } from '../../src/kube/kube-api-error.js';

describe("an informer's backoff", () => {
  it('waits 0.5 s after the first failure, doubling each failure in a row, never past 30 s', () => {
    // random 0.999...: the top of the jitter range, the exponential itself.
    const top = (failures: number) => informerRetryDelayMs(failures, 1 - Number.EPSILON);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(top)).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(top(1_000)).toBe(MAX_RETRY_MS);
    expect(top(0)).toBe(500);
  });

  it('jitters each wait into [½, 1] of it, so informers cut off together do not come back together', () => {
    expect(informerRetryDelayMs(3, 0)).toBe(1000);
    expect(informerRetryDelayMs(3, 0.5)).toBe(1500);
    expect(informerRetryDelayMs(20, 0)).toBe(MAX_RETRY_MS / 2);
    for (let failures = 1; failures < 40; failures += 1) {
      const wait = informerRetryDelayMs(failures, Math.random());
      expect(wait).toBeGreaterThanOrEqual(250);
      expect(wait).toBeLessThanOrEqual(MAX_RETRY_MS);
    }
  });

  it('bounds the attempts of an outage: about log2 of its length, then one each 15 to 30 s', () => {
    // The attempts an informer makes while the server is away 60 s, at the bottom of the jitter.
    let elapsed = 0;
    let attempts = 0;
    for (let failures = 1; elapsed < 60_000; failures += 1) {
      attempts += 1;
      elapsed += informerRetryDelayMs(failures, 0);
    }
    expect(attempts).toBeLessThanOrEqual(10);
  });

  it('counts a watch the server ended at once with nothing delivered as a failure', () => {
    expect(isShortWatch(20, false)).toBe(true);
    expect(isShortWatch(20, true)).toBe(false);
    expect(isShortWatch(300_000, false)).toBe(false);
  });

  it('watches an unreachable server again from its version; lists after 410 at once, after other answers in a while', () => {
    const refused = new KubeTransportError('GET', '/x', { cause: new Error('connect ECONNREFUSED') });
    for (const failures of [1, 3, 50]) expect(afterWatchFailure(refused, failures)).toBe('rewatch');
    const gone = new KubeApiError('GET', '/x', 410, 'Expired', 'too old resource version');
    expect(afterWatchFailure(gone, 1)).toBe('relist-now');
    const unavailable = new KubeApiError('GET', '/x', 503, 'ServiceUnavailable', 'starting');
    expect([1, 2, 3].map((failures) => afterWatchFailure(unavailable, failures))).toEqual([
      'rewatch',
      'rewatch',
      'relist',
    ]);
  });

  it('takes a 404 or 403 as missing at once for a collection never found, after three in a row for one it held', () => {
    const judge = missingCollectionJudge();
    expect(judge.acceptMissing()).toBe(true);
    expect(judge.acceptMissing()).toBe(true);
    judge.found();
    // An API server starting up: a moment of 404s, then the collection again; nothing was emptied.
    expect([judge.acceptMissing(), judge.acceptMissing()]).toEqual([false, false]);
    judge.found();
    expect([judge.acceptMissing(), judge.acceptMissing(), judge.acceptMissing()]).toEqual([
      false,
      false,
      true,
    ]);
    // Gone (the CRD deleted): every later answer is missing at once, until it is found again.
    expect(judge.acceptMissing()).toBe(true);
  });
});

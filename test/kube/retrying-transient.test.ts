import { KubeApiError } from '../../src/kube/kube-api-error.js';
import { retryingTransient } from '../../src/kube/retrying-transient.js';

const busy = () => new KubeApiError('GET', '/apis/x', 429, 'TooManyRequests', 'storage is (re)initializing');
const forbidden = () => new KubeApiError('GET', '/apis/x', 403, 'Forbidden', 'no');

describe('retryingTransient', () => {
  it('tries again after a transient answer and returns what the next attempt gets', async () => {
    const answers: (() => Promise<string>)[] = [
      () => Promise.reject(busy()),
      () => Promise.reject(busy()),
      () => Promise.resolve('listed'),
    ];
    let calls = 0;
    const result = await retryingTransient(
      new AbortController().signal,
      () => answers[calls++]!(),
      [1, 1, 1],
    );
    expect(result).toBe('listed');
    expect(calls).toBe(3);
  });

  it('gives up with the last error once the delays are spent', async () => {
    let calls = 0;
    const work = () => {
      calls += 1;
      return Promise.reject(busy());
    };
    await expect(retryingTransient(new AbortController().signal, work, [1, 1])).rejects.toThrow(
      'storage is (re)initializing',
    );
    expect(calls).toBe(3);
  });

  it('does not retry an error that is not transient, nor once the signal aborted', async () => {
    let calls = 0;
    const refuse = () => {
      calls += 1;
      return Promise.reject(forbidden());
    };
    await expect(retryingTransient(new AbortController().signal, refuse, [1, 1])).rejects.toThrow('403');
    expect(calls).toBe(1);
    const aborted = new AbortController();
    aborted.abort();
    calls = 0;
    const work = () => {
      calls += 1;
      return Promise.reject(busy());
    };
    await expect(retryingTransient(aborted.signal, work, [1, 1])).rejects.toThrow('429');
    expect(calls).toBe(1);
  });
});

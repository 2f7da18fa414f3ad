import { retryAfterMs } from '../../src/kube/kube-client.js';

describe('retryAfterMs: when a request is sent again', () => {
  it('waits the seconds a 429 or a 5xx answer names', () => {
    expect(retryAfterMs({ status: 429, retryAfter: '1' })).toBe(1000);
    expect(retryAfterMs({ status: 503, retryAfter: ' 3 ' })).toBe(3000);
    expect(retryAfterMs({ status: 500, retryAfter: '0' })).toBe(0);
  });

  it('waits at most 10 s, however long the server asks for', () => {
    expect(retryAfterMs({ status: 429, retryAfter: '3600' })).toBe(10_000);
  });

  it('lets the answer stand without a header, with one it cannot read, or for any other status', () => {
    expect(retryAfterMs({ status: 429 })).toBeUndefined();
    expect(retryAfterMs({ status: 503, retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT' })).toBeUndefined();
    expect(retryAfterMs({ status: 429, retryAfter: '-1' })).toBeUndefined();
    expect(retryAfterMs({ status: 409, retryAfter: '1' })).toBeUndefined();
    expect(retryAfterMs({ status: 200, retryAfter: '1' })).toBeUndefined();
  });
});

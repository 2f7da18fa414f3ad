import { KubeApiError, kubeApiErrorFrom } from '../../src/kube/kube-api-error.js';

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });

describe('kubeApiErrorFrom', () => {
  it.each([
    [500, 'InternalError', 'retryable'],
    [503, 'ServiceUnavailable', 'retryable'],
    [429, 'TooManyRequests', 'retryable'],
    [409, 'Conflict', 'retryable'],
    [422, 'Invalid', 'stalled'],
    [403, 'Forbidden', 'stalled'],
    [404, 'NotFound', 'stalled'],
  ])('classifies %i %s as %s', (code, reason, intent) => {
    const error = kubeApiErrorFrom(
      'PATCH',
      '/api/v1/namespaces/a/configmaps/b',
      code,
      status(code, reason, 'x'),
    );
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error).toMatchObject({
      status: code,
      statusReason: reason,
      intent,
      retryable: intent === 'retryable',
    });
  });

  it('recognises the immutable-field answer kubectl --force acts on', () => {
    const message = 'Service "web" is invalid: spec.clusterIP: Invalid value: "10.0.0.9": field is immutable';
    expect(kubeApiErrorFrom('PATCH', '/p', 422, status(422, 'Invalid', message)).immutableField).toBe(true);
    expect(
      kubeApiErrorFrom('PATCH', '/p', 422, status(422, 'Invalid', 'spec.replicas: must be >= 0'))
        .immutableField,
    ).toBe(false);
  });

  it('keeps a body that is not a Status as the detail', () => {
    const error = kubeApiErrorFrom('GET', '/api/v1', 502, '<html>bad gateway</html>');
    expect(error.message).toBe('GET /api/v1: 502: <html>bad gateway</html>');
    expect(error.statusReason).toBe('');
  });
});

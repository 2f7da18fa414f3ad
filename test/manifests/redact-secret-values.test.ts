import { isSecretManifest, redactSecretValues } from '../../src/manifests/redact-secret-values.js';

const secret = (data: Record<string, string>, stringData: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's' },
  data,
  stringData,
});

describe('redactSecretValues', () => {
  it('removes an invalid base64 value the server echoes', () => {
    const message =
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4: "not-base64!MARKER"';
    const out = redactSecretValues(message, secret({ token: 'not-base64!MARKER' }));
    expect(out).not.toContain('MARKER');
    expect(out).toContain('illegal base64 data at input byte 4');
    expect(out).toContain('[REDACTED]');
  });

  it('removes the raw and the decoded text of a valid data value and every stringData value', () => {
    const encoded = Buffer.from('hunter2-password').toString('base64');
    const message = `bad: ${encoded} / hunter2-password / plain-string-value`;
    const out = redactSecretValues(message, secret({ token: encoded }, { extra: 'plain-string-value' }));
    expect(out).toBe('bad: [REDACTED] / [REDACTED] / [REDACTED]');
  });

  it('removes the escaped form a server quotes a multi-line value in', () => {
    const out = redactSecretValues(
      'value "line-one\\nline-two" rejected',
      secret({}, { k: 'line-one\nline-two' }),
    );
    expect(out).toBe('value "[REDACTED]" rejected');
  });

  it('leaves values shorter than 4 characters alone; binary data is redacted as base64 only', () => {
    const binary = Buffer.from([0, 1, 2, 255, 254]).toString('base64');
    expect(redactSecretValues('field a is wrong', secret({ k: 'a' }))).toBe('field a is wrong');
    expect(redactSecretValues(`x ${binary}`, secret({ k: binary }))).toBe('x [REDACTED]');
  });

  it('does not mutate its input and ignores non-Secrets', () => {
    const manifest = secret({ token: 'not-base64!MARKER' });
    const copy = structuredClone(manifest);
    redactSecretValues('not-base64!MARKER', manifest);
    expect(manifest).toEqual(copy);
    expect(isSecretManifest(manifest)).toBe(true);
    expect(isSecretManifest({ apiVersion: 'v1', kind: 'ConfigMap' })).toBe(false);
  });
});

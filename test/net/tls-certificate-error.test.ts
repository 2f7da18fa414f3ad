import { tlsFailureOf } from '../../src/net/tls-certificate-error.js';

function nodeError(code: string, message: string, extra: object = {}): Error {
  return Object.assign(new Error(message), { code }, extra);
}

const fetchStep = {
  step: 'fetch',
  url: 'https://git.corp.example/repo.git',
  secretName: 'team/git',
} as const;

describe('tlsFailureOf', () => {
  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CertificateUntrusted'],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CertificateUntrusted'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'CertificateUntrusted'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'CertificateUntrusted'],
    ['CERT_HAS_EXPIRED', 'CertificateInvalid'],
    ['CERT_NOT_YET_VALID', 'CertificateInvalid'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'CertificateInvalid'],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ClientCertificateRefused'],
    ['ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', 'ClientCertificateRefused'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'ClientCertificateRefused'],
  ])('maps %s to %s', (code, reason) => {
    const failure = tlsFailureOf(nodeError(code, 'handshake'), 'git.corp.example:8443');
    expect(failure?.reason).toBe(reason);
    expect(failure?.message).toContain('TLS to git.corp.example:8443 failed');
    expect(failure?.message).toContain(code);
  });

  it.each(['ECONNREFUSED', 'EPROTO', 'HPE_INVALID_CONSTANT'])('leaves %s to its caller', (code) => {
    expect(tlsFailureOf(nodeError(code, 'x'), 'h')).toBeUndefined();
    expect(tlsFailureOf('not an error', 'h')).toBeUndefined();
  });

  it("names the certificate's subject and issuer when Node gives the certificate", () => {
    const error = nodeError(
      'ERR_TLS_CERT_ALTNAME_INVALID',
      "Hostname/IP does not match certificate's altnames",
      {
        cert: { subject: { CN: 'other.example' }, issuer: { O: 'Corp', CN: 'Corp Root CA' } },
      },
    );
    expect(tlsFailureOf(error, 'git.corp.example')?.message).toContain(
      'certificate subject CN=other.example, issuer O=Corp,CN=Corp Root CA',
    );
  });

  it('says which key of which Secret fixes an untrusted or refused certificate', () => {
    const untrusted = tlsFailureOf(nodeError('SELF_SIGNED_CERT_IN_CHAIN', 'x'), 'git.corp.example');
    expect(untrusted?.describe(fetchStep)).toMatch(
      /: put the certificate authority .* in ca\.crt of Secret team\/git \(spec\.source\.secretRef\)$/,
    );
    const refused = tlsFailureOf(
      nodeError('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'x'),
      'git.corp.example',
    );
    expect(refused?.describe(undefined)).toContain(
      'in tls.crt and tls.key of a Secret named by spec.source.secretRef or spec.source.certSecretRef',
    );
  });

  it.each([
    [{ secretName: 'git', certSecretName: 'corp-ca' }, 'Secret corp-ca (spec.source.certSecretRef)'],
    [{ secretName: undefined, certSecretName: 'corp-ca' }, 'Secret corp-ca (spec.source.certSecretRef)'],
    [{ secretName: 'git', certSecretName: undefined }, 'Secret git (spec.source.secretRef)'],
    [
      { secretName: undefined, certSecretName: undefined },
      'a Secret named by spec.source.secretRef or spec.source.certSecretRef',
    ],
  ])('names the Secret the TLS material comes from (%o)', (names, named) => {
    const at = { step: 'fetch', url: 'oci://registry.corp.example/app', ...names } as const;
    const untrusted = tlsFailureOf(nodeError('SELF_SIGNED_CERT_IN_CHAIN', 'x'), 'registry.corp.example');
    expect(untrusted?.describe(at)).toContain(`in ca.crt of ${named}`);
    const refused = tlsFailureOf(nodeError('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'x'), 'registry.corp.example');
    expect(refused?.describe(at)).toContain(`in tls.crt and tls.key of ${named}`);
  });
});

import { outboundProxyOf } from '../../src/net/outbound-proxy.js';
import { withSecretTls } from '../../src/source/source-connection.js';

describe('withSecretTls', () => {
  it.each([
    ['certSecretRef over secretRef', { tls: { ca: 'CERT-REF' } }, { ca: 'SECRET-REF' }, { ca: 'CERT-REF' }],
    ["secretRef's when certSecretRef gives none", {}, { ca: 'SECRET-REF' }, { ca: 'SECRET-REF' }],
    ["certSecretRef's alone", { tls: { ca: 'CERT-REF' } }, undefined, { ca: 'CERT-REF' }],
    ['none from either', {}, undefined, undefined],
  ])('takes %s', (_case, connection, secretTls, tls) => {
    expect(withSecretTls(connection, secretTls).tls).toEqual(tls);
  });

  it('keeps the proxy', () => {
    const proxy = outboundProxyOf(new URL('http://proxy.corp.example:3128'), true, undefined);
    expect(withSecretTls({ proxy }, { ca: 'CA' })).toEqual({ proxy, tls: { ca: 'CA' } });
  });
});

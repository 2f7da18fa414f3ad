import type { TlsMaterial } from '../net/outbound-tls.js';

/**
 * The TLS material of a Secret's data, under Flux's key names: `ca.crt` (a private certificate authority
 * the server's certificate is signed by), `tls.crt` and `tls.key` (a client certificate for mTLS, both or
 * neither). Undefined when it holds none; a problem when it holds half a client certificate.
 */
export function tlsMaterialOf(
  data: Readonly<Record<string, string>>,
): { readonly tls: TlsMaterial | undefined } | { readonly problem: string } {
  const ca = nonEmpty(data['ca.crt']);
  const cert = nonEmpty(data['tls.crt']);
  const key = nonEmpty(data['tls.key']);
  if ((cert === undefined) !== (key === undefined)) {
    return { problem: `has ${cert === undefined ? 'tls.key without tls.crt' : 'tls.crt without tls.key'}` };
  }
  if (ca === undefined && cert === undefined) return { tls: undefined };
  return {
    tls: {
      ...(ca === undefined ? {} : { ca }),
      ...(cert === undefined || key === undefined ? {} : { cert, key }),
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

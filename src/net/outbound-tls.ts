import { createHash } from 'node:crypto';

/**
 * The TLS material a tenant's Secret gives one destination (Flux's key names): `ca.crt` to trust a server
 * signed by a private certificate authority, `tls.crt` and `tls.key` to present a client certificate
 * (mTLS). It goes on the connection of that request only (docs/tls-and-proxies.md).
 */
export interface TlsMaterial {
  /** PEM certificates trusted for this destination instead of the system's. */
  readonly ca?: string;
  /** PEM client certificate (chain) presented when the server asks for one. */
  readonly cert?: string;
  /** The client certificate's PEM private key. */
  readonly key?: string;
}

/**
 * A digest of the material, for keys that must tell two materials apart (the Git cache's fetch flights
 * and access proofs); empty without any, so a source without TLS material keeps its identity.
 */
export function tlsMaterialIdentity(tls: TlsMaterial | undefined): string {
  if (tls === undefined) return '';
  const digest = createHash('sha256').update(JSON.stringify([tls.ca ?? '', tls.cert ?? '', tls.key ?? '']));
  return `+tls:${digest.digest('hex')}`;
}

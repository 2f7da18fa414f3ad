import { IntentError, type FailureIntent, type FailureStep } from '../errors/intent-error.js';
import { TLS_CLIENT_REFUSED_CODES, TLS_INVALID_CODES, TLS_UNTRUSTED_CODES } from './tls-error-codes.js';

/**
 * Which certificate a TLS handshake failed on. `CertificateUntrusted`: the server's certificate is signed
 * by an authority the controller does not trust (a private CA: give it as `ca.crt`).
 * `CertificateInvalid`: the server's certificate is expired, not yet valid or not for the host named.
 * `ClientCertificateRefused`: the server asked for a client certificate (mTLS) and got none, or refused the
 * one given (`tls.crt`/`tls.key`).
 */
type TlsFailureReason = 'CertificateUntrusted' | 'CertificateInvalid' | 'ClientCertificateRefused';

export class TlsCertificateError extends IntentError {
  override readonly name = 'TlsCertificateError';
  readonly code = 'TLS_CERTIFICATE_FAILED';
  /** A Secret to change is the tenant's (stalled); a server's certificate to renew may be renewed (retried). */
  readonly intent: FailureIntent;
  constructor(
    readonly reason: TlsFailureReason,
    /** `host:port` of the server, never the path. */
    readonly host: string,
    /** Node's error code (`SELF_SIGNED_CERT_IN_CHAIN`, `CERT_HAS_EXPIRED` …). */
    readonly tlsCode: string,
    /** What Node said, with the certificate's subject and issuer when it knows them. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`TLS to ${host} failed: ${whichCertificate(reason)} (${tlsCode}: ${detail})`, options);
    this.intent = reason === 'CertificateInvalid' ? 'retryable' : 'stalled';
  }

  /** At the fetch, what to change: which key of which Secret. */
  override describe(at: FailureStep | undefined): string {
    const secret = at?.step === 'fetch' ? tlsSecretOf(at) : UNNAMED_TLS_SECRET;
    switch (this.reason) {
      case 'CertificateUntrusted':
        return `${this.message}: put the certificate authority that signed it in ca.crt of ${secret}`;
      case 'CertificateInvalid':
        return `${this.message}: the server's certificate must be renewed or issued for this host`;
      case 'ClientCertificateRefused':
        return `${this.message}: put a client certificate the server accepts in tls.crt and tls.key of ${secret}`;
    }
  }
}

const UNNAMED_TLS_SECRET = 'a Secret named by spec.source.secretRef or spec.source.certSecretRef';

/**
 * The Secret the TLS material comes from: certSecretRef's when the spec names one (its material is used
 * over secretRef's, as Flux has it), else secretRef's.
 */
function tlsSecretOf(at: Extract<FailureStep, { step: 'fetch' }>): string {
  if (at.certSecretName !== undefined) return `Secret ${at.certSecretName} (spec.source.certSecretRef)`;
  if (at.secretName !== undefined) return `Secret ${at.secretName} (spec.source.secretRef)`;
  return UNNAMED_TLS_SECRET;
}

function whichCertificate(reason: TlsFailureReason): string {
  switch (reason) {
    case 'CertificateUntrusted':
      return "the server's certificate is not signed by a trusted certificate authority";
    case 'CertificateInvalid':
      return "the server's certificate is not valid for it";
    case 'ClientCertificateRefused':
      return 'the server refused the client certificate (none given, or not one it trusts)';
  }
}

/**
 * The TlsCertificateError a network error of a connection to `host` is, when it is a certificate's
 * failure (Node's codes, see tls-error-codes.ts); undefined for any other error.
 */
export function tlsFailureOf(error: unknown, host: string): TlsCertificateError | undefined {
  const code = property(error, 'code');
  if (typeof code !== 'string') return undefined;
  const reason = TLS_UNTRUSTED_CODES.has(code)
    ? 'CertificateUntrusted'
    : TLS_INVALID_CODES.has(code)
      ? 'CertificateInvalid'
      : TLS_CLIENT_REFUSED_CODES.has(code)
        ? 'ClientCertificateRefused'
        : undefined;
  if (reason === undefined) return undefined;
  return new TlsCertificateError(reason, host, code, detailOf(error), { cause: error });
}

/** Node's message, and the certificate's names when the error carries it (a host name mismatch does). */
function detailOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cert = property(error, 'cert');
  const subject = distinguishedName(property(cert, 'subject'));
  const issuer = distinguishedName(property(cert, 'issuer'));
  if (subject === undefined) return message;
  return `${message}; certificate subject ${subject}${issuer === undefined ? '' : `, issuer ${issuer}`}`;
}

function distinguishedName(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const parts = Object.entries(value as Record<string, unknown>)
    .filter(([, part]) => typeof part === 'string')
    .map(([key, part]) => `${key}=${String(part)}`);
  return parts.length === 0 ? undefined : parts.join(',');
}

function property(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

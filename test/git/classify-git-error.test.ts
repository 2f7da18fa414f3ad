import { classifyGitError } from '../../src/git/classify-git-error.js';
import {
  GitAuthError,
  GitFetchError,
  GitHostKeyMismatchError,
  GitRefNotFoundError,
  GitRepositoryNotFoundError,
  GitSshAuthError,
  GitUnreachableError,
} from '../../src/git/git-error.js';
import { SshAuthRefusedError, SshCommandError, SshHostKeyError } from '../../src/net/ssh-errors.js';
import { TlsCertificateError } from '../../src/net/tls-certificate-error.js';

const context = { url: 'https://git.example.com/repo.git', ref: 'branch main', remoteRef: 'refs/heads/main' };

function isoGitError(code: string, data: Record<string, unknown>): Error {
  return Object.assign(new Error(code), { code, data });
}

function nodeError(code: string): Error {
  return Object.assign(new Error(`connect ${code}`), { code });
}

describe('classifyGitError', () => {
  it.each<[string, unknown, new (...args: never[]) => Error, string]>([
    ['401', isoGitError('HttpError', { statusCode: 401 }), GitAuthError, 'stalled'],
    ['403', isoGitError('HttpError', { statusCode: 403 }), GitAuthError, 'stalled'],
    ['404', isoGitError('HttpError', { statusCode: 404 }), GitUnreachableError, 'retryable'],
    ['503', isoGitError('HttpError', { statusCode: 503 }), GitUnreachableError, 'retryable'],
    ['429', isoGitError('HttpError', { statusCode: 429 }), GitUnreachableError, 'retryable'],
    ['418', isoGitError('HttpError', { statusCode: 418 }), GitUnreachableError, 'retryable'],
    [
      'the ref missing on the remote',
      isoGitError('NotFoundError', { what: 'refs/heads/main' }),
      GitRefNotFoundError,
      'stalled',
    ],
    [
      'an object missing locally',
      isoGitError('NotFoundError', { what: 'abc123' }),
      GitFetchError,
      'retryable',
    ],
    ['not a smart server', isoGitError('SmartHttpError', {}), GitUnreachableError, 'retryable'],
    ['a TLS failure', nodeError('EPROTO'), GitUnreachableError, 'retryable'],
    ['an answer that is not HTTP', nodeError('HPE_INVALID_CONSTANT'), GitUnreachableError, 'retryable'],
    ['connection refused', nodeError('ECONNREFUSED'), GitUnreachableError, 'retryable'],
    ['DNS failure', nodeError('ENOTFOUND'), GitUnreachableError, 'retryable'],
    ['connection reset', nodeError('ECONNRESET'), GitUnreachableError, 'retryable'],
    ['simple-get timeout', new Error('Request timed out'), GitUnreachableError, 'retryable'],
    ['anything else', new Error('pack is corrupt'), GitFetchError, 'retryable'],
    [
      'an SSH host key not in known_hosts',
      new SshHostKeyError('h', 22, 'SHA256:x', 'ssh-ed25519'),
      GitHostKeyMismatchError,
      'stalled',
    ],
    ['an SSH key refused', new SshAuthRefusedError('git'), GitSshAuthError, 'stalled'],
    [
      'an SSH key that cannot be read',
      new SshAuthRefusedError('git', 'bad passphrase'),
      GitSshAuthError,
      'stalled',
    ],
    [
      'upload-pack without the repository',
      new SshCommandError(128, "fatal: '/srv/x.git' does not appear to be a git repository"),
      GitRepositoryNotFoundError,
      'stalled',
    ],
    [
      'upload-pack failing otherwise',
      new SshCommandError(1, 'fatal: out of memory'),
      GitUnreachableError,
      'retryable',
    ],
    [
      'an SSH handshake timeout',
      Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' }),
      GitUnreachableError,
      'retryable',
    ],
    [
      'an SSH socket refused',
      Object.assign(nodeError('ECONNREFUSED'), { level: 'client-socket' }),
      GitUnreachableError,
      'retryable',
    ],
  ])('maps %s', (_name, error, expectedClass, intent) => {
    const classified = classifyGitError(error, context);
    expect(classified).toBeInstanceOf(expectedClass);
    expect(classified.intent).toBe(intent);
    expect(classified.cause).toBe(error);
    expect((classified as GitUnreachableError).url).toBe(context.url);
    expect(classified.message).toContain(context.url);
  });

  it('names the ref in a ref-not-found message', () => {
    expect(classifyGitError(isoGitError('NotFoundError', { what: 'refs/heads/main' }), context).message).toBe(
      'branch main not found in https://git.example.com/repo.git',
    );
  });

  it('says the same of a closed port, a reset, a TLS failure and a non-Git HTTP answer, keeping which for the log', () => {
    const errors = [
      nodeError('ECONNREFUSED'),
      nodeError('ECONNRESET'),
      nodeError('ETIMEDOUT'),
      nodeError('EPROTO'),
      nodeError('HPE_INVALID_CONSTANT'),
      isoGitError('HttpError', { statusCode: 404 }),
      isoGitError('HttpError', { statusCode: 200 }),
      isoGitError('SmartHttpError', {}),
    ].map((error) => classifyGitError(error, context));
    const said = new Set(errors.map((error) => JSON.stringify([error.reason, error.intent, error.message])));
    expect([...said]).toEqual([
      JSON.stringify([
        'GitUnreachable',
        'retryable',
        'Git source https://git.example.com/repo.git unreachable or not a Git repository',
      ]),
    ]);
    expect(errors.map((error) => (error as GitUnreachableError).detail)).toEqual([
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPROTO',
      'HPE_INVALID_CONSTANT',
      'HTTP 404',
      'HTTP 200',
      'the server does not speak the smart HTTP protocol',
    ]);
  });

  it.each([
    ['SELF_SIGNED_CERT_IN_CHAIN', 'CertificateUntrusted', 'stalled'],
    ['CERT_HAS_EXPIRED', 'CertificateInvalid', 'retryable'],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ClientCertificateRefused', 'stalled'],
  ])('says which certificate failed on %s, naming the host', (code, reason, intent) => {
    const classified = classifyGitError(nodeError(code), context);
    expect(classified).toBeInstanceOf(TlsCertificateError);
    expect([classified.reason, classified.intent]).toEqual([reason, intent]);
    expect(classified.message).toContain(`TLS to git.example.com failed`);
    expect(classified.message).toContain(code);
  });

  it('passes our own errors through', () => {
    const error = new GitAuthError(context.url, 401);
    expect(classifyGitError(error, context)).toBe(error);
  });

  it('names the host as known_hosts does and the key the server showed', () => {
    const error = classifyGitError(
      new SshHostKeyError('git.example.com', 2222, 'SHA256:abc', 'ssh-ed25519'),
      context,
    );
    expect(error.message).toBe(
      "host key mismatch for https://git.example.com/repo.git: the server's ssh-ed25519 key SHA256:abc is not in known_hosts for [git.example.com]:2222",
    );
    expect(error.reason).toBe('HostKeyMismatch');
  });
});

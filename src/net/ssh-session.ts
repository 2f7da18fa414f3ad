import { connect, type LookupFunction } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { ClientChannel, ServerHostKeyAlgorithm } from 'ssh2';
import { CONNECT_TIMEOUT_MS, type DestinationPolicy } from './destination-policy.js';
import { DestinationRefusedError } from './destination-refused-error.js';
import { destinationUrlRefusal } from './destination-url-refusal.js';
import { destinationLookup } from './outbound-request.js';
import { checkHostKey, hostKeyAlgorithms, parseKnownHosts } from './known-hosts.js';
import { SshAuthRefusedError, SshHostKeyError } from './ssh-errors.js';

/** The key an SSH session authenticates with and the host keys it accepts (a Git credentials Secret). */
export interface SshAccess {
  /** A private key, OpenSSH or PEM (ed25519, ECDSA, RSA). */
  readonly identity: string;
  /** The key's passphrase, when it is encrypted. */
  readonly passphrase?: string | undefined;
  /** known_hosts lines: the server's key must be among them (no trust on first use). */
  readonly knownHosts: string;
}

export interface SshCommand {
  readonly username: string;
  readonly host: string;
  readonly port: number;
  /** The remote command, quoted by the caller. */
  readonly command: string;
  readonly access: SshAccess;
  readonly policy: DestinationPolicy;
  readonly signal: AbortSignal;
  /** A guardedLookup over another resolver; default the policy's. */
  readonly lookup?: LookupFunction | undefined;
}

/** A remote command running: its streams, how it ended, and how to end the session. */
export interface SshExec {
  readonly stdout: Readable;
  readonly stdin: Writable;
  /** Settles once the command ended: its exit code (undefined: none said) and the start of its stderr. */
  readonly ended: Promise<{ readonly code: number | undefined; readonly stderr: string }>;
  close(): void;
}

const MAX_STDERR_BYTES = 4096;

/**
 * ssh2, loaded by the first SSH fetch rather than at start: its ciphers and its WebAssembly Poly1305
 * (16 MiB of memory reserved) are not needed by a controller without SSH sources, nor by each shard.
 */
let ssh2: Promise<typeof import('ssh2')> | undefined;
const loadSsh2 = () => (ssh2 ??= import('ssh2'));

/**
 * Runs `command` over SSH through the outbound door: the host is checked as any source URL's (the policy's
 * hosts and addresses), the TCP socket is opened here with the policy's guarded lookup (so DNS's answer is
 * checked at connect time) and its connect timeout, and only then handed to ssh2. The server's key must be
 * in `access.knownHosts`; SshHostKeyError and SshAuthRefusedError say which side refused.
 */
export async function execOverSsh(request: SshCommand): Promise<SshExec> {
  const { host, port, policy, signal } = request;
  const address = `ssh://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  const refusal = destinationUrlRefusal(address, policy.allowedHosts, policy.reading);
  if (policy.checkAddresses && refusal !== undefined) {
    throw new DestinationRefusedError(policy.kind, `${host}:${port}`, refusal);
  }
  signal.throwIfAborted();
  const { Client } = await loadSsh2();
  signal.throwIfAborted();
  const lookup = request.lookup ?? destinationLookup(policy);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, ...(lookup === undefined ? {} : { lookup }) });
    const client = new Client();
    let refused: Error | undefined;
    const fail = (error: Error) => {
      reject(signal.aborted ? (signal.reason as Error) : (refused ?? error));
      client.end();
      socket.destroy();
    };
    const timer = setTimeout(
      () =>
        fail(
          Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }),
        ),
      CONNECT_TIMEOUT_MS,
    );
    const onAbort = () => fail(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => clearTimeout(timer));
    socket.once('close', () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
    socket.once('error', fail);
    const knownHosts = parseKnownHosts(request.access.knownHosts);
    client.on('error', (error: Error & { level?: string }) => {
      if (error.level === 'client-authentication') refused ??= new SshAuthRefusedError(request.username);
      fail(error);
    });
    client.on('ready', () => {
      client.exec(request.command, (error, channel) => {
        if (error !== undefined) {
          fail(error);
          return;
        }
        resolve(running(channel, () => client.end()));
      });
    });
    try {
      client.connect({
        sock: socket,
        username: request.username,
        privateKey: request.access.identity,
        ...(request.access.passphrase === undefined ? {} : { passphrase: request.access.passphrase }),
        readyTimeout: CONNECT_TIMEOUT_MS,
        ...serverHostKeyOption(hostKeyAlgorithms(knownHosts, host, port)),
        hostVerifier: (key: Buffer) => {
          const verdict = checkHostKey(knownHosts, host, port, key);
          if (!verdict.accepted)
            refused = new SshHostKeyError(host, port, verdict.fingerprint, verdict.keyType);
          return verdict.accepted;
        },
      });
    } catch (error) {
      // ssh2 throws when it cannot read the private key (malformed, or the passphrase is wrong).
      refused = new SshAuthRefusedError(request.username, error instanceof Error ? error.message : undefined);
      fail(refused);
    }
  });
}

/** ssh2 takes only the algorithms it implements: an unknown type listed in known_hosts is left out. */
function serverHostKeyOption(algorithms: string[] | undefined): {
  algorithms?: { serverHostKey: ServerHostKeyAlgorithm[] };
} {
  const supported = algorithms?.filter((name): name is ServerHostKeyAlgorithm =>
    SUPPORTED_HOST_KEYS.has(name),
  );
  return supported === undefined || supported.length === 0
    ? {}
    : { algorithms: { serverHostKey: supported } };
}

const SUPPORTED_HOST_KEYS: ReadonlySet<string> = new Set([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
]);

function running(channel: ClientChannel, end: () => void): SshExec {
  let stderr = '';
  channel.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8').slice(0, MAX_STDERR_BYTES);
  });
  const ended = new Promise<{ code: number | undefined; stderr: string }>((resolve) => {
    let code: number | undefined;
    channel.on('exit', (exitCode: unknown) => {
      if (typeof exitCode === 'number') code = exitCode;
    });
    channel.on('close', () => {
      resolve({ code, stderr });
      end();
    });
  });
  return {
    stdout: channel,
    stdin: channel,
    ended,
    close: () => {
      channel.destroy();
      end();
    },
  };
}

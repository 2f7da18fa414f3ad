/**
 * A real OCI registry for tests: distribution's `registry`, built from its Go module by
 * scripts/build-oci-tools.sh, run on 127.0.0.1 over plain HTTP (or its own `http.tls`, with a certificate
 * of a private authority and, for mTLS, `clientcas`) with its storage in a temp dir. It is
 * what Flux users push their artifacts to: the basic authentication is its own htpasswd, the token
 * authentication its own `auth: token` (with registry-token-server.ts as the token service), and the push
 * notifications are its own, `{"events": [...]}` envelopes of media type
 * `application/vnd.docker.distribution.events.v2+json` (v3 of distribution; its v2 sent `...events.v1+json`
 * with the same fields). Nothing of it is imitated.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { freePort } from './api-get.js';
import type { PrivateCertificateAuthority } from './private-certificate-authority.js';
import { ociToolsBin } from './oci-tools.js';
import { startProcess, stopProcesses, tail, waitForProcess } from './start-process.js';

const execFileAsync = promisify(execFile);
/** The registry starts in well under a second; the bound is for a loaded machine. */
const START_TIMEOUT_MS = 30_000;

/** The registry's `auth: token`: Bearer challenges naming `realm`, tokens verified against `certificate`. */
export interface RegistryTokenAuth {
  /** The token endpoint, `http://host:port/path`, named in each challenge. */
  readonly realm: string;
  /** The `service` of each challenge, and the `aud` a token must carry. */
  readonly service: string;
  /** The `iss` a token must carry. */
  readonly issuer: string;
  /** PEM: the `rootcertbundle` a token's `x5c` certificate must chain to. */
  readonly certificate: string;
}

export interface OciRegistryOptions {
  /** Basic authentication, from an htpasswd file: every request without these credentials gets 401. */
  readonly auth?: { readonly username: string; readonly password: string };
  /** Token authentication (not with `auth`): every request without a token granting it gets 401. */
  readonly token?: RegistryTokenAuth;
  /** An endpoint the registry POSTs its event envelopes to (pushes and pulls), with these headers. */
  readonly notify?: { readonly url: string; readonly headers?: Readonly<Record<string, string>> };
  /**
   * HTTPS with the authority's server certificate (for 127.0.0.1); `mutual`: every client must present
   * a certificate the authority signed (`http.tls.clientcas`), as its client certificate is.
   */
  readonly tls?: { readonly authority: PrivateCertificateAuthority; readonly mutual?: boolean };
}

export interface OciRegistry {
  /** `127.0.0.1:<port>`: the registry part of a reference such as `127.0.0.1:5000/app:v1`. */
  readonly host: string;
  /** `http://127.0.0.1:<port>` (`https://` with `tls`), without a trailing slash. */
  readonly url: string;
  /** Kills the registry and removes its temp dir, storage included. */
  stop(): Promise<void>;
}

/** The 22 characters of bcrypt's base64 (its own alphabet, no padding) for a 16-byte salt. */
function bcryptSalt(): string {
  const standard = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const bcrypt = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(16).toString('base64').replace(/=+$/, '')]
    .map((c) => bcrypt[standard.indexOf(c)])
    .join('');
}

/**
 * An htpasswd line with a bcrypt hash, the only kind the registry accepts. Node has no bcrypt; the
 * system's crypt(3) has (libxcrypt, in every Debian), and perl, also in every Debian, calls it. The
 * password goes through the environment, never the command line.
 */
async function htpasswdLine(username: string, password: string): Promise<string> {
  const setting = `$2y$05$${bcryptSalt()}`;
  const { stdout } = await execFileAsync('perl', ['-e', 'print crypt($ENV{PASSWORD}, $ENV{SETTING})'], {
    env: { PATH: process.env.PATH, PASSWORD: password, SETTING: setting },
  });
  // crypt(3) answers a failure with a short string starting with '*' rather than an error.
  if (!stdout.startsWith(setting) || stdout.length !== 60) {
    throw new Error(`crypt(3) made no bcrypt hash (it gave '${stdout}')`);
  }
  return `${username}:${stdout}\n`;
}

/** The `auth` section: htpasswd, token, or none. */
function authConfig(options: OciRegistryOptions, workDir: string): Record<string, unknown> {
  if (options.auth !== undefined && options.token !== undefined) {
    throw new Error('the registry takes htpasswd or token authentication, not both');
  }
  if (options.auth !== undefined) {
    return { auth: { htpasswd: { realm: 'applyset-test', path: path.join(workDir, 'htpasswd') } } };
  }
  if (options.token === undefined) return {};
  const { realm, service, issuer } = options.token;
  return {
    auth: { token: { realm, service, issuer, rootcertbundle: path.join(workDir, 'token-root.pem') } },
  };
}

/** The `http.tls` section: the server's certificate, and the authority clients must be signed by. */
function tlsConfig(options: OciRegistryOptions, workDir: string): Record<string, unknown> {
  if (options.tls === undefined) return {};
  const { mutual = false } = options.tls;
  return {
    tls: {
      certificate: path.join(workDir, 'server.crt'),
      key: path.join(workDir, 'server.key'),
      ...(mutual ? { clientcas: [path.join(workDir, 'client-ca.crt')] } : {}),
    },
  };
}

async function writeTlsFiles(options: OciRegistryOptions, workDir: string): Promise<void> {
  if (options.tls === undefined) return;
  const { authority } = options.tls;
  await writeFile(path.join(workDir, 'server.crt'), authority.server.cert);
  await writeFile(path.join(workDir, 'server.key'), authority.server.key, { mode: 0o600 });
  await writeFile(path.join(workDir, 'client-ca.crt'), authority.ca);
}

/**
 * The `docker-distribution-api-version` header of `GET /v2/`, trusting the authority (and presenting
 * its client certificate) when the registry serves HTTPS.
 */
function apiVersionOf(url: string, options: OciRegistryOptions): Promise<string | undefined> {
  if (options.tls === undefined) {
    return fetch(`${url}/v2/`, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.headers.get('docker-distribution-api-version') ?? undefined,
    );
  }
  const { authority, mutual = false } = options.tls;
  const tls = { ca: authority.ca, ...(mutual ? authority.client : {}) };
  return new Promise((resolve, reject) => {
    const request = https.get(`${url}/v2/`, { ...tls, signal: AbortSignal.timeout(2000) }, (response) => {
      response.resume();
      const version = response.headers['docker-distribution-api-version'];
      resolve(typeof version === 'string' ? version : undefined);
    });
    request.on('error', reject);
  });
}

function registryConfig(workDir: string, port: number, options: OciRegistryOptions): Record<string, unknown> {
  return {
    version: '0.1',
    log: { level: 'info', formatter: 'text', accesslog: { disabled: false } },
    storage: {
      filesystem: { rootdirectory: path.join(workDir, 'storage') },
      delete: { enabled: true },
      // Nothing else writes to the storage: uploads left over are never purged while a test runs.
      maintenance: { uploadpurging: { enabled: false } },
    },
    http: {
      addr: `127.0.0.1:${port}`,
      secret: randomBytes(16).toString('hex'),
      ...tlsConfig(options, workDir),
    },
    ...authConfig(options, workDir),
    ...(options.notify === undefined
      ? {}
      : {
          notifications: {
            events: { includereferences: true },
            endpoints: [
              {
                name: 'test',
                url: options.notify.url,
                headers: Object.fromEntries(
                  Object.entries(options.notify.headers ?? {}).map(([name, value]) => [name, [value]]),
                ),
                timeout: '5s',
                threshold: 5,
                backoff: '1s',
              },
            ],
          },
        }),
  };
}

export async function startOciRegistry(options: OciRegistryOptions = {}): Promise<OciRegistry> {
  const bin = await ociToolsBin();
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'applyset-oci-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const url = `${options.tls === undefined ? 'http' : 'https'}://${host}`;
  const config = path.join(workDir, 'config.yml');
  const log = path.join(workDir, 'registry.log');
  try {
    if (options.auth !== undefined) {
      const line = await htpasswdLine(options.auth.username, options.auth.password);
      await writeFile(path.join(workDir, 'htpasswd'), line);
    }
    if (options.token !== undefined) {
      await writeFile(path.join(workDir, 'token-root.pem'), options.token.certificate);
    }
    await writeTlsFiles(options, workDir);
    await writeFile(config, stringify(registryConfig(workDir, port, options)));
  } catch (error) {
    await rm(workDir, { recursive: true, force: true });
    throw error;
  }
  // The registry reads REGISTRY_* variables over its config: it sees none of the machine's. It traces
  // with OpenTelemetry, whose exporter would send to localhost:4318 by default: none here.
  const env = { PATH: process.env.PATH, HOME: workDir, OTEL_TRACES_EXPORTER: 'none' };
  const child = startProcess(path.join(bin, 'registry'), ['serve', config], log, process.pid, env);
  const exited = () =>
    child.exitCode === null && child.signalCode === null
      ? undefined
      : `exit ${child.exitCode ?? child.signalCode}`;
  const stop = async () => {
    await stopProcesses([child]);
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    // `/v2/` answers 200, or 401 with auth, once the registry serves: its API version header says so.
    await waitForProcess(
      'registry',
      async () => (await apiVersionOf(url, options)) === 'registry/2.0',
      START_TIMEOUT_MS,
      exited,
    );
  } catch (error) {
    const logTail = await tail(log);
    await stop();
    throw new Error(`the registry did not start: ${String(error)}\n${logTail}`, { cause: error });
  }
  return { host, url, stop };
}

import { messageOf } from '../errors/message-of.js';
/**
 * Runs a kubeconfig `exec` credential plugin (client.authentication.k8s.io v1 or v1beta1) and reads
 * the ExecCredential it prints. The token is kept until its `expirationTimestamp` (forever when it
 * has none) and fetched again then, or at once when the API server answered 401 to it.
 */
import { execFile } from 'node:child_process';
import {
  describeEntry,
  type KubeConfigCluster,
  type KubeConfigExec,
  type KubeConfigUser,
} from './kubeconfig-model.js';
import { KubeConfigError } from './kubeconfig-error.js';

const API_VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

/** A plugin run that failed; the message names the user, its kubeconfig and what went wrong. */
class ExecCredentialError extends KubeConfigError {}

export interface ExecCredentialSource {
  /** The bearer token: the cached one while it has not expired, else the plugin's new answer. */
  token(): Promise<string>;
  /** Drops the cached token (the server refused it); true when there was one to drop. */
  invalidate(): boolean;
}

export interface ExecCredentialOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  /** The CA bytes, sent to the plugin with provideClusterInfo. */
  readonly caPem?: string;
}

export function createExecCredentialSource(
  user: KubeConfigUser & { readonly exec: KubeConfigExec },
  cluster: KubeConfigCluster,
  options: ExecCredentialOptions = {},
): ExecCredentialSource {
  const now = options.now ?? Date.now;
  const where = describeEntry('user', user);
  const exec = user.exec;
  if (!API_VERSIONS.has(exec.apiVersion)) {
    throw new ExecCredentialError(
      `${where}: exec apiVersion "${exec.apiVersion}" is not client.authentication.k8s.io/v1 or v1beta1`,
    );
  }
  if (exec.interactiveMode === 'Always') {
    throw new ExecCredentialError(`${where}: exec plugin needs a terminal (interactiveMode Always)`);
  }
  let cached: { token: string; expiresAt: number } | undefined;
  let running: Promise<string> | undefined;

  const run = async (): Promise<string> => {
    const stdout = await runPlugin(exec, execInfo(exec, cluster, options.caPem), options.env, where);
    const credential = readCredential(stdout, exec.apiVersion, where);
    cached = credential;
    return credential.token;
  };
  return {
    token: () => {
      if (cached !== undefined && now() < cached.expiresAt) return Promise.resolve(cached.token);
      // Requests that ask at once share one run of the plugin.
      running ??= run().finally(() => (running = undefined));
      return running;
    },
    invalidate: () => {
      const had = cached !== undefined;
      cached = undefined;
      return had;
    },
  };
}

/** The KUBERNETES_EXEC_INFO the plugin reads: never interactive; the cluster when asked for. */
function execInfo(exec: KubeConfigExec, cluster: KubeConfigCluster, caPem: string | undefined): string {
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo === true) {
    spec['cluster'] = {
      server: cluster.server,
      ...(cluster.tlsServerName === undefined ? {} : { 'tls-server-name': cluster.tlsServerName }),
      ...(cluster.skipTLSVerify === true ? { 'insecure-skip-tls-verify': true } : {}),
      ...(caPem === undefined ? {} : { 'certificate-authority-data': Buffer.from(caPem).toString('base64') }),
    };
  }
  return JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec });
}

function runPlugin(
  exec: KubeConfigExec,
  info: string,
  env: Readonly<Record<string, string | undefined>> | undefined,
  where: string,
): Promise<string> {
  const childEnv: Record<string, string | undefined> = {
    ...(env ?? process.env),
    KUBERNETES_EXEC_INFO: info,
  };
  for (const { name, value } of exec.env ?? []) childEnv[name] = value;
  return new Promise((resolve, reject) => {
    const child = execFile(
      exec.command,
      [...(exec.args ?? [])],
      { env: childEnv, maxBuffer: 4 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EACCES') {
          const hint = exec.installHint === undefined ? '' : `\n${exec.installHint.trim()}`;
          return reject(
            new ExecCredentialError(
              `${where}: exec plugin "${exec.command}" cannot be run (${code === 'ENOENT' ? 'not found' : 'not executable'})${hint}`,
            ),
          );
        }
        const tail = stderr.trim().slice(-1000);
        const how = error.killed
          ? `was stopped (${error.signal ?? 'timeout'})`
          : `exited with code ${String(code)}`;
        reject(
          new ExecCredentialError(
            `${where}: exec plugin "${exec.command}" ${how}${tail === '' ? '' : `: ${tail}`}`,
          ),
        );
      },
    );
    child.stdin?.end();
  });
}

/** The token and when it expires, from the plugin's stdout; anything else is an error. */
function readCredential(
  stdout: string,
  apiVersion: string,
  where: string,
): { token: string; expiresAt: number } {
  const fail = (what: string) => new ExecCredentialError(`${where}: exec plugin printed ${what}`);
  let parsed: unknown;
  try {
    // eslint-disable-next-line parse-door/one-parse-door -- a credential plugin's output: the plugin runs only from the user's own kubeconfig, or a tenant's under --allow-remote-kubeconfig-exec, which trusts it
    parsed = JSON.parse(stdout);
  } catch (error) {
    throw fail(`no ExecCredential JSON (${messageOf(error)})`);
  }
  const credential = parsed as { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
  if (credential.kind !== 'ExecCredential' || credential.apiVersion !== apiVersion) {
    throw fail(
      `kind "${String(credential.kind)}" apiVersion "${String(credential.apiVersion)}", not an ExecCredential of ${apiVersion}`,
    );
  }
  const status = credential.status ?? {};
  if (status['clientCertificateData'] !== undefined || status['clientKeyData'] !== undefined) {
    throw fail('a client certificate; only exec plugins that return a token are supported');
  }
  const token = status['token'];
  if (typeof token !== 'string' || token === '') throw fail('an ExecCredential with no status.token');
  const expiry = status['expirationTimestamp'];
  if (expiry === undefined || expiry === null) return { token, expiresAt: Number.POSITIVE_INFINITY };
  const expiresAt = typeof expiry === 'string' ? Date.parse(expiry) : Number.NaN;
  if (Number.isNaN(expiresAt)) throw fail(`an expirationTimestamp that is not a time: ${String(expiry)}`);
  return { token, expiresAt };
}

/**
 * Reads one kubeconfig file's YAML into the KubeConfig model: field names as kubectl writes them,
 * paths made absolute against the file's directory (as client-go resolves them), every value
 * checked for its type so a wrong file fails here with the file and field named, not later.
 */
import { isAbsolute, resolve } from 'node:path';
import { InputParseError } from '../input/input-bounds.js';
import { readYamlValue } from '../input/read-yaml-value.js';
import type {
  KubeConfig,
  KubeConfigCluster,
  KubeConfigContext,
  KubeConfigExec,
  KubeConfigUser,
} from './kubeconfig-model.js';

type Fields = Readonly<Record<string, unknown>>;

/** A field of the file is not what kubectl expects there; the message names the field. */
class KubeConfigFieldError extends Error {}

/**
 * Parses the text of `file`; an empty (or comment-only) text is an empty config, as for client-go. The
 * text comes through the parse door (a kubeconfig Secret is a tenant's): its message never quotes it.
 */
export function parseKubeConfigText(text: string, file: string): KubeConfig {
  let read: unknown;
  try {
    read = readYamlValue(text, file, 'kubeconfig');
  } catch (error) {
    if (error instanceof InputParseError) throw new KubeConfigFieldError(`the file ${error.detail}`);
    throw error;
  }
  const root = read ?? {};
  if (!isFields(root)) throw new KubeConfigFieldError('the file is not a YAML mapping');
  const dir = resolve(file, '..');
  const path = (value: string | undefined) =>
    value === undefined || value === '' || isAbsolute(value) ? value : resolve(dir, value);
  return {
    clusters: entries(root, 'clusters', 'cluster').map(([name, fields, at]) =>
      clusterOf(name, fields, at, path, file),
    ),
    users: entries(root, 'users', 'user').map(([name, fields, at]) => userOf(name, fields, at, path, file)),
    contexts: entries(root, 'contexts', 'context').map(([name, fields, at]) => contextOf(name, fields, at)),
    currentContext: str(root, 'current-context', 'current-context') ?? '',
  };
}

type PathOf = (value: string | undefined) => string | undefined;

/** `[name, inner fields, "users[2].user"]` of each entry of a named list such as `users`. */
function entries(root: Fields, list: string, inner: string): [string, Fields, string][] {
  const value = root[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new KubeConfigFieldError(`${list} is not a list`);
  return value.map((entry: unknown, index) => {
    const at = `${list}[${index}]`;
    if (!isFields(entry)) throw new KubeConfigFieldError(`${at} is not a mapping`);
    const name = str(entry, 'name', `${at}.name`);
    if (name === undefined || name === '') throw new KubeConfigFieldError(`${at}.name is missing`);
    const fields = entry[inner] ?? {};
    if (!isFields(fields)) throw new KubeConfigFieldError(`${at}.${inner} is not a mapping`);
    return [name, fields, `${at}.${inner}`];
  });
}

function clusterOf(name: string, f: Fields, at: string, path: PathOf, file: string): KubeConfigCluster {
  return dropUndefined({
    name,
    server: str(f, 'server', at) ?? '',
    caData: str(f, 'certificate-authority-data', at),
    caFile: path(str(f, 'certificate-authority', at)),
    skipTLSVerify: flag(f, 'insecure-skip-tls-verify', at),
    tlsServerName: str(f, 'tls-server-name', at),
    proxyUrl: str(f, 'proxy-url', at),
    source: file,
  });
}

const IMPERSONATION = ['as', 'as-uid', 'as-groups', 'as-user-extra'] as const;

function userOf(name: string, f: Fields, at: string, path: PathOf, file: string): KubeConfigUser {
  const impersonation = IMPERSONATION.filter((key) => f[key] !== undefined && f[key] !== null);
  const authProvider = f['auth-provider'];
  return dropUndefined({
    name,
    token: str(f, 'token', at),
    tokenFile: path(str(f, 'tokenFile', at)),
    certData: str(f, 'client-certificate-data', at),
    keyData: str(f, 'client-key-data', at),
    certFile: path(str(f, 'client-certificate', at)),
    keyFile: path(str(f, 'client-key', at)),
    username: str(f, 'username', at),
    password: str(f, 'password', at),
    exec: execOf(f['exec'], `${at}.exec`, path),
    authProvider: authProvider === null ? undefined : authProvider,
    impersonationFields: impersonation.length > 0 ? impersonation : undefined,
    source: file,
  });
}

function execOf(value: unknown, at: string, path: PathOf): KubeConfigExec | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isFields(value)) throw new KubeConfigFieldError(`${at} is not a mapping`);
  const command = str(value, 'command', at);
  if (command === undefined || command === '') throw new KubeConfigFieldError(`${at}.command is missing`);
  const apiVersion = str(value, 'apiVersion', at) ?? '';
  const args = value['args'];
  if (args !== undefined && args !== null) {
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
      throw new KubeConfigFieldError(`${at}.args is not a list of strings`);
    }
  }
  const env = value['env'];
  if (env !== undefined && env !== null && !Array.isArray(env)) {
    throw new KubeConfigFieldError(`${at}.env is not a list`);
  }
  return dropUndefined({
    apiVersion,
    // A command with a directory in it is a path relative to the file; a bare name is found on PATH.
    command: command.includes('/') ? (path(command) ?? command) : command,
    args: Array.isArray(args) ? (args as string[]) : undefined,
    env: Array.isArray(env)
      ? env.map((entry: unknown, index) => {
          const where = `${at}.env[${index}]`;
          if (!isFields(entry)) throw new KubeConfigFieldError(`${where} is not a mapping`);
          return { name: str(entry, 'name', where) ?? '', value: str(entry, 'value', where) ?? '' };
        })
      : undefined,
    installHint: str(value, 'installHint', at),
    // client-go's defaults: no cluster info; v1beta1 runs interactively if it can (we never do).
    provideClusterInfo: flag(value, 'provideClusterInfo', at) ?? false,
    interactiveMode:
      str(value, 'interactiveMode', at) ??
      (apiVersion === 'client.authentication.k8s.io/v1beta1' ? 'IfAvailable' : undefined),
  });
}

function contextOf(name: string, f: Fields, at: string): KubeConfigContext {
  return dropUndefined({
    name,
    cluster: str(f, 'cluster', at) ?? '',
    user: str(f, 'user', at) ?? '',
    namespace: str(f, 'namespace', at),
  });
}

/** A string field; absent or null is undefined; a number or boolean is refused as kubectl does. */
function str(fields: Fields, key: string, at: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new KubeConfigFieldError(`${at === key ? key : `${at}.${key}`} is not a string`);
  }
  return value;
}

function flag(fields: Fields, key: string, at: string): boolean | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new KubeConfigFieldError(`${at}.${key} is not true or false`);
  return value;
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object without its undefined fields, so optional fields stay absent (exactOptionalPropertyTypes). */
function dropUndefined<T extends object>(value: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

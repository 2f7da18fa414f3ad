/**
 * The credentials of a `kubernetes.io/dockerconfigjson` Secret (spec.source.secretRef of an `oci://`
 * source), as `kubectl create secret docker-registry` writes it: `{"auths": {"HOST": {"username",
 * "password"} or {"auth": base64("user:password")}}}`. Each entry's credentials are for its host alone.
 * It may hold TLS material too (`ca.crt`, `tls.crt`, `tls.key`), as Flux reads a HelmRepository's
 * secretRef; spec.source.certSecretRef's is used over it.
 */
import { messageOf } from '../../errors/message-of.js';
import { readJsonValue } from '../../input/read-json-value.js';
import { isJsonObject } from '../../manifests/json-value.js';
import type { TlsMaterial } from '../../net/outbound-tls.js';
import { tlsMaterialOf } from '../tls-material-of.js';
import type { RegistryCredentials } from './registry-client.js';

export type CredentialsFor = (host: string) => RegistryCredentials | undefined;

/** What a pull Secret holds: credentials per host, TLS material, or both. */
export interface PullSecret {
  readonly credentialsFor: CredentialsFor;
  readonly tls?: TlsMaterial;
}

/**
 * The credentials and TLS material of a pull Secret. A Secret with TLS material and no
 * `.dockerconfigjson` is for a registry that needs no credentials; one whose `.dockerconfigjson` cannot
 * be read is a problem whatever else it holds.
 */
export function pullSecretOf(
  data: Readonly<Record<string, string>>,
  from: string,
): { readonly pullSecret: PullSecret } | { readonly problem: string } {
  const material = tlsMaterialOf(data);
  if ('problem' in material) return material;
  const tls = material.tls === undefined ? {} : { tls: material.tls };
  if (data['.dockerconfigjson'] === undefined && material.tls !== undefined) {
    return { pullSecret: { credentialsFor: () => undefined, ...tls } };
  }
  const read = pullCredentialsOf(data, from);
  return 'problem' in read ? read : { pullSecret: { credentialsFor: read.credentialsFor, ...tls } };
}

/** The credentials per host of the Secret's `.dockerconfigjson`; a problem in words when it has none. */
function pullCredentialsOf(
  data: Readonly<Record<string, string>>,
  from: string,
): { readonly credentialsFor: CredentialsFor } | { readonly problem: string } {
  const text = data['.dockerconfigjson'];
  if (text === undefined) {
    return {
      problem:
        'has no .dockerconfigjson key (nor ca.crt, nor tls.crt and tls.key): an oci:// source takes a kubernetes.io/dockerconfigjson Secret',
    };
  }
  let credentialsFor: CredentialsFor | undefined;
  try {
    credentialsFor = dockerConfigCredentials(text, `${from}, key .dockerconfigjson`);
  } catch (error) {
    return { problem: `cannot be read: ${messageOf(error)}` };
  }
  if (credentialsFor === undefined) return { problem: 'has no "auths" in its .dockerconfigjson' };
  return { credentialsFor };
}

/**
 * The credentials per host of a Docker config's `auths` (a pull Secret's `.dockerconfigjson`, the CLI's
 * `~/.docker/config.json`); undefined when it has no `auths` map. Throws when the text is not JSON.
 */
export function dockerConfigCredentials(text: string, source: string): CredentialsFor | undefined {
  const config = readJsonValue(text, source, 'registry');
  const auths = isJsonObject(config) && isJsonObject(config['auths']) ? config['auths'] : undefined;
  if (auths === undefined) return undefined;
  const byHost = new Map<string, RegistryCredentials>();
  for (const [key, entry] of Object.entries(auths)) {
    const credentials = isJsonObject(entry) ? credentialsOf(entry) : undefined;
    if (credentials !== undefined) byHost.set(hostOf(key), credentials);
  }
  return (host) => byHost.get(host.toLowerCase());
}

function credentialsOf(entry: Readonly<Record<string, unknown>>): RegistryCredentials | undefined {
  const { username, password, auth } = entry;
  if (typeof username === 'string' && typeof password === 'string' && username !== '') {
    return { username, password };
  }
  if (typeof auth !== 'string') return undefined;
  const decoded = Buffer.from(auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon <= 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `https://registry.example:5000/v1/` and `registry.example:5000` both name `registry.example:5000`. */
function hostOf(key: string): string {
  const bare = key.includes('://') ? key.slice(key.indexOf('://') + 3) : key;
  const slash = bare.indexOf('/');
  return (slash === -1 ? bare : bare.slice(0, slash)).toLowerCase();
}

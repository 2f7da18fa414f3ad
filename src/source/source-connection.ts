/**
 * How the controller connects to a source beyond its credentials: spec.source.certSecretRef's TLS
 * material and spec.source.proxySecretRef's proxy (docs/tls-and-proxies.md), each a Secret of the
 * ApplySet's namespace read as its account. A Secret missing, unreadable or malformed stalls the run
 * naming it, before anything is fetched.
 */
import { stalledStep, type Step } from '../api/reconcile-outcome.js';
import { outboundProxyOf, type OutboundProxy } from '../net/outbound-proxy.js';
import type { OutboundRequest } from '../net/outbound-request.js';
import type { TlsMaterial } from '../net/outbound-tls.js';
import { readSetSecret } from './set-secret.js';
import type { SetAccount, SourceRequest } from './source-adapter.js';
import { tlsMaterialOf } from './tls-material-of.js';

export interface SourceConnection {
  readonly tls?: TlsMaterial;
  readonly proxy?: OutboundProxy;
}

/** The connection as the outbound door takes it: the TLS material on the socket, the tenant's proxy. */
export function outboundConnection(
  connection: SourceConnection | undefined,
): Pick<OutboundRequest, 'transport' | 'proxy'> {
  return {
    ...(connection?.tls === undefined ? {} : { transport: connection.tls }),
    ...(connection?.proxy === undefined ? {} : { proxy: connection.proxy }),
  };
}

/**
 * The connection with the TLS material of spec.source.secretRef's Secret when certSecretRef gives none:
 * certSecretRef's is used over it, as Flux has it.
 */
export function withSecretTls(
  connection: SourceConnection,
  secretTls: TlsMaterial | undefined,
): SourceConnection {
  return connection.tls !== undefined || secretTls === undefined
    ? connection
    : { ...connection, tls: secretTls };
}

export async function readSourceConnection(
  { spec, account }: Pick<SourceRequest, 'spec' | 'account'>,
  signal: AbortSignal,
): Promise<Step<SourceConnection>> {
  const { certSecretName, proxySecretName } = spec.source;
  const tls = await readSecretAs(account, certSecretName, 'spec.source.certSecretRef', signal, (data) => {
    const material = tlsMaterialOf(data);
    if ('problem' in material) return material;
    return material.tls === undefined
      ? { problem: 'has no ca.crt, tls.crt or tls.key' }
      : { value: material.tls };
  });
  if ('done' in tls) return tls;
  const proxy = await readSecretAs(account, proxySecretName, 'spec.source.proxySecretRef', signal, proxyOf);
  if ('done' in proxy) return proxy;
  return {
    value: {
      ...(tls.value === undefined ? {} : { tls: tls.value }),
      ...(proxy.value === undefined ? {} : { proxy: proxy.value }),
    },
  };
}

/** The Secret `name` (when the spec names one) read as the account and made into T, or the stall. */
async function readSecretAs<T>(
  account: SetAccount,
  name: string | undefined,
  field: string,
  signal: AbortSignal,
  parse: (data: Readonly<Record<string, string>>) => { value: T } | { problem: string },
): Promise<Step<T | undefined>> {
  if (name === undefined) return { value: undefined };
  const secret = await readSetSecret(account, name, field, signal);
  if ('done' in secret) return secret;
  const parsed = parse(secret.value.data);
  if ('problem' in parsed) {
    return stalledStep(
      'SecretNotFound',
      `Secret ${account.namespace}/${name} (${field}) ${parsed.problem}; nothing was fetched or applied`,
    );
  }
  return parsed;
}

/** Flux's keys: `address` (http://host:port), `username` and `password` (both or neither). */
function proxyOf(data: Readonly<Record<string, string>>): { value: OutboundProxy } | { problem: string } {
  const address = data['address'];
  if (address === undefined || address === '') return { problem: 'has no address' };
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return { problem: 'has an address that is not a URL' };
  }
  if (url.protocol !== 'http:') return { problem: `has an address that is not http:// (${url.protocol}//)` };
  if (url.username !== '' || url.password !== '')
    return { problem: 'has credentials in its address; put them in username and password' };
  const { username, password } = data;
  if ((username === undefined) !== (password === undefined))
    return { problem: 'has one of username and password without the other' };
  const credentials = username === undefined || password === undefined ? undefined : { username, password };
  return { value: outboundProxyOf(url, true, credentials) };
}

import type { HttpClient } from 'isomorphic-git';
import type { LookupFunction } from 'node:net';
import { gitPolicy } from '../net/destination-policy.js';
import type { OutboundProxy } from '../net/outbound-proxy.js';
import type { TlsMaterial } from '../net/outbound-tls.js';
import type { ProxyEnvironment } from '../net/proxy-environment.js';
import { gitSshRequest } from '../net/git-ssh-client.js';
import type { SourceHostList } from '../net/host-list.js';
import { abortableHttpClient } from './abortable-http-client.js';
import type { FetchCredentials } from './fetch-credentials.js';
import { byteCountingHttpClient } from './fetch-limit-guards.js';
import type { GitRepositoryTooLargeError } from './git-error.js';
import type { GitFetchLimits } from './git-fetch-limits.js';
import { followRedirects } from './follow-redirects.js';
import type { RepositoryUrl } from './parse-repository-url.js';

interface FetchTransportInput {
  readonly repository: RepositoryUrl;
  readonly credentials: FetchCredentials | undefined;
  readonly signal: AbortSignal;
  readonly allowedHosts: SourceHostList;
  readonly lookup: LookupFunction;
  readonly limits: GitFetchLimits;
  /** The source's TLS material (a private CA, a client certificate), for https. */
  readonly tls?: TlsMaterial | undefined;
  /** A tenant's proxy (spec.source.proxySecretRef); default the environment's, `proxies`. */
  readonly proxy?: OutboundProxy | undefined;
  readonly proxies?: ProxyEnvironment | undefined;
  /** Called when an answer goes over a fetch limit. */
  readonly overLimit: (refusal: GitRepositoryTooLargeError) => void;
}

/** isomorphic-git's `http` for one fetch, and the URL isomorphic-git is to be given. */
interface FetchTransport {
  readonly http: HttpClient;
  /** The URL as isomorphic-git takes it (an http(s) one: an ssh:// source's only names the requests). */
  readonly remoteUrl: string;
  /** Ends the answers isomorphic-git left unfinished. */
  close(): Promise<void>;
}

/**
 * How one fetch reaches its server, every request through the outbound door bound to `signal` and every
 * answer counted against the fetch limits: smart HTTP with each redirect checked, or, for an ssh:// source,
 * upload-pack over SSH (no redirects there) with the Secret's key and known_hosts.
 */
export function fetchTransport(input: FetchTransportInput): FetchTransport {
  const { repository, credentials, signal, allowedHosts, lookup, limits } = input;
  const policy = gitPolicy(allowedHosts, input.proxies);
  const ssh = repository.ssh;
  if (ssh !== undefined && credentials !== undefined && 'identity' in credentials) {
    const client = abortableHttpClient(signal, {
      policy,
      send: gitSshRequest(ssh, credentials, policy, lookup),
    });
    const http = byteCountingHttpClient(client, repository.url, limits, input.overLimit);
    const port = ssh.port === 22 ? '' : `:${ssh.port}`;
    const host = ssh.host.includes(':') ? `[${ssh.host}]` : ssh.host;
    return { http, remoteUrl: `https://${host}${port}/${ssh.path.replace(/^\/+/, '')}`, close: client.close };
  }
  const client = abortableHttpClient(signal, {
    ...{ policy, lookup },
    ...(input.tls === undefined ? {} : { tls: input.tls }),
    ...(input.proxy === undefined ? {} : { proxy: input.proxy }),
  });
  const redirecting = followRedirects(client, { repositoryUrl: repository.url, allowedHosts });
  const http = byteCountingHttpClient(redirecting, repository.url, limits, input.overLimit);
  return { http, remoteUrl: repository.url, close: client.close };
}

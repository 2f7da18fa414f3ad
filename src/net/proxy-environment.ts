/**
 * Which proxy a request goes through, as `curl`, Go's net/http and most tools read the environment:
 * `HTTPS_PROXY` for https:// addresses, `HTTP_PROXY` for http:// ones (lower case wins over upper case, as
 * curl has it), and `NO_PROXY` to go direct: a comma list of `*`, host names (`example.com` and
 * `.example.com` both cover example.com and every name under it), IP addresses, each optionally with a
 * `:port`. CIDR ranges are not read. Pure: the environment is handed in (src/main.ts reads it once).
 */

/** The proxies the operator set, for every tenant-facing request of the controller. */
export interface ProxyEnvironment {
  readonly https?: URL;
  readonly http?: URL;
  readonly noProxy: readonly NoProxyEntry[];
}

interface NoProxyEntry {
  /** Lower case, without a leading dot; `*` for every host. */
  readonly host: string;
  readonly port?: string;
}

/** The proxies of `env`; a variable that is not an http:// URL is an error (the controller refuses to start). */
export function proxyEnvironmentOf(env: Readonly<Record<string, string | undefined>>): ProxyEnvironment {
  const read = (name: string) => nonEmpty(env[name.toLowerCase()]) ?? nonEmpty(env[name]);
  const https = read('HTTPS_PROXY');
  const http = read('HTTP_PROXY');
  return {
    ...(https === undefined ? {} : { https: proxyUrl('HTTPS_PROXY', https) }),
    ...(http === undefined ? {} : { http: proxyUrl('HTTP_PROXY', http) }),
    noProxy: parseNoProxy(read('NO_PROXY') ?? ''),
  };
}

/** The proxy `url` goes through, or undefined: direct (no proxy for its scheme, or NO_PROXY names it). */
export function proxyFor(environment: ProxyEnvironment | undefined, url: URL): URL | undefined {
  if (environment === undefined) return undefined;
  const proxy = url.protocol === 'https:' ? environment.https : environment.http;
  if (proxy === undefined || noProxyCovers(environment.noProxy, url)) return undefined;
  return proxy;
}

/** @internal exported for its tests */
export function noProxyCovers(entries: readonly NoProxyEntry[], url: URL): boolean {
  const host = bare(url.hostname);
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return entries.some(
    (entry) =>
      (entry.port === undefined || entry.port === port) &&
      (entry.host === '*' || host === entry.host || host.endsWith(`.${entry.host}`)),
  );
}

/** @internal exported for its tests */
export function parseNoProxy(text: string): NoProxyEntry[] {
  return text
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '')
    .map((item) => {
      // `[::1]:8080`, `host:443`; a bare IPv6 address has colons but no port.
      const port = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(item);
      const [host, portText] = port === null ? [item, undefined] : [port[1] ?? item, port[2]];
      return {
        host: bare(host).replace(/^\*?\./, ''),
        ...(portText === undefined ? {} : { port: portText }),
      };
    });
}

function proxyUrl(name: string, value: string): URL {
  // `proxy.corp:3128` without a scheme is read as http://, as curl does.
  const url = new URL(value.includes('://') ? value : `http://${value}`);
  if (url.protocol !== 'http:') {
    throw new Error(`${name} must be an http:// proxy address, got ${url.protocol}// (${url.host})`);
  }
  return url;
}

/** A host as compared: lower case, without brackets or a trailing dot. */
function bare(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** On a Git credentials Secret: the hosts its credentials may be sent to, as a source host list. */
export const SOURCE_HOSTS_ANNOTATION = 'applyset.dev/source-hosts';

/**
 * A list of `host` or `host:port` entries, as in the `applyset.dev/source-hosts` Secret annotation and the
 * `--allowed-source-hosts` flag: comma-separated, compared case-insensitively, exact host (no wildcards, so
 * `example.com` does not cover `git.example.com`), an IPv6 address in brackets as in a URL (`[::1]:8080`).
 */
export type SourceHostList = readonly string[];

/** Parses `a.example.com, b.example.org:8443` into normalized entries; empty items are dropped. */
export function parseSourceHostList(text: string): SourceHostList {
  return text
    .split(',')
    .map((item) => item.trim().toLowerCase().replace(/\.$/, ''))
    .filter((item) => item !== '');
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'https:': '443', 'http:': '80', 'ssh:': '22' };

/**
 * True when the URL's host is listed: an entry without a port matches any port of that host, `host:port` only that
 * port (the URL's default port counts, so `git.example.com:443` matches `https://git.example.com/`).
 */
export function sourceHostListAllows(list: SourceHostList, url: string): boolean {
  const parsed = new URL(url);
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const port = parsed.port !== '' ? parsed.port : (DEFAULT_PORTS[parsed.protocol] ?? '80');
  return list.some((entry) => entry === host || entry === `${host}:${port}`);
}

/** `host` or `host:port` of a URL as messages name it (the port only when it is not the scheme's default). */
export function sourceHostOf(url: string): string {
  return new URL(url).host.toLowerCase();
}

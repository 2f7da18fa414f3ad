/**
 * A list of `host` or `host:port` entries, as in the `applyset.dev/source-hosts` Secret annotation and the
 * `--allowed-source-hosts` flag: comma-separated, compared case-insensitively, exact host (no wildcards).
 */
export type SourceHostList = readonly string[];

/** Parses `a.example.com, b.example.org:8443` into normalized entries; empty items are dropped. */
export function parseSourceHostList(text: string): SourceHostList {
  return text
    .split(',')
    .map((item) => item.trim().toLowerCase().replace(/\.$/, ''))
    .filter((item) => item !== '');
}

/**
 * True when the URL's host is listed: an entry without a port matches any port of that host, `host:port` only that
 * port (the URL's default port counts, so `git.example.com:443` matches `https://git.example.com/`).
 */
export function sourceHostListAllows(list: SourceHostList, url: string): boolean {
  const parsed = new URL(url);
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'https:' ? '443' : '80';
  return list.some((entry) => entry === host || entry === `${host}:${port}`);
}

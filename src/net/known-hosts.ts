import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** One key of a known_hosts file: the host patterns it is for and the key's wire blob. */
interface KnownHostKey {
  /** `@revoked` lines: a host offering this key is refused whatever else is listed. */
  readonly revoked: boolean;
  readonly patterns: readonly string[];
  readonly keyType: string;
  readonly blob: Buffer;
}

/**
 * Reads a known_hosts file as OpenSSH writes it (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"): one key a line,
 * `[marker] patterns keytype base64 [comment]`. Comments, blank lines, `@cert-authority` lines (no
 * certificates here) and lines that do not parse are left out: a key that is not read matches nothing,
 * so the host is refused, never let through.
 */
export function parseKnownHosts(text: string): readonly KnownHostKey[] {
  const keys: KnownHostKey[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) continue;
    const marker = fields[0].startsWith('@') ? fields.shift() : undefined;
    if (marker !== undefined && marker !== '@revoked') continue;
    const [patterns, keyType, base64] = fields;
    if (patterns === undefined || keyType === undefined || base64 === undefined) continue;
    const blob = Buffer.from(base64, 'base64');
    if (blob.length === 0 || blobKeyType(blob) !== keyType) continue;
    keys.push({ revoked: marker === '@revoked', patterns: patterns.split(','), keyType, blob });
  }
  return keys;
}

/** What checking a host's key against known_hosts found. */
export type HostKeyVerdict =
  | { readonly accepted: true }
  | { readonly accepted: false; readonly fingerprint: string; readonly keyType: string };

/**
 * Whether `blob` (the key the server showed, in its wire form) is listed for `host` on `port`: OpenSSH's
 * rule, without trust on first use. The host is looked up as `host` on port 22 and as `[host]:port` on
 * another, in plain patterns (exact, case-insensitive; `*`/`?` wildcards and `!` negations are not read,
 * so such entries match nothing) and hashed ones (`|1|salt|hash`, HMAC-SHA1 of the name).
 */
export function checkHostKey(
  knownHosts: readonly KnownHostKey[],
  host: string,
  port: number,
  blob: Buffer,
): HostKeyVerdict {
  const name = hostName(host, port);
  const forHost = knownHosts.filter((entry) => entry.patterns.some((pattern) => patternNames(pattern, name)));
  const same = forHost.filter((entry) => entry.blob.equals(blob));
  if (same.length > 0 && same.every((entry) => !entry.revoked)) return { accepted: true };
  return { accepted: false, fingerprint: keyFingerprint(blob), keyType: blobKeyType(blob) ?? 'unknown' };
}

/** The signature algorithms of each key type known_hosts may list (an RSA key signs with SHA-2 first). */
const ALGORITHMS_OF: Readonly<Record<string, readonly string[]>> = {
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/**
 * The host key algorithms to offer a server: those of the key types known_hosts lists for it, in their
 * order, as OpenSSH's client does. A server with an ed25519 and an ECDSA key, of which known_hosts has the
 * ECDSA one only, is then asked for that one (else it would show its ed25519 key and be refused).
 * Undefined when none is listed: the server is refused whatever it shows.
 */
export function hostKeyAlgorithms(
  knownHosts: readonly KnownHostKey[],
  host: string,
  port: number,
): string[] | undefined {
  const name = hostName(host, port);
  const types = knownHosts
    .filter((entry) => !entry.revoked && entry.patterns.some((pattern) => patternNames(pattern, name)))
    .flatMap((entry) => ALGORITHMS_OF[entry.keyType] ?? [entry.keyType]);
  return types.length === 0 ? undefined : [...new Set(types)];
}

function hostName(host: string, port: number): string {
  return port === 22 ? host.toLowerCase() : `[${host.toLowerCase()}]:${port}`;
}

/**
 * `SHA256:` and the unpadded base64 of the key blob's SHA-256, as `ssh-keygen -l` prints it.
 * @internal test seam: its tests compare with ssh-keygen's output
 */
export function keyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

function patternNames(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [salt, hash] = pattern.slice(3).split('|');
    if (salt === undefined || hash === undefined) return false;
    const expected = Buffer.from(hash, 'base64');
    const actual = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest();
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }
  return pattern.toLowerCase() === name;
}

/** The key type a wire blob starts with (a length-prefixed string), or undefined when it has none. */
function blobKeyType(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const length = blob.readUInt32BE(0);
  if (length === 0 || length > 64 || blob.length < 4 + length) return undefined;
  return blob.subarray(4, 4 + length).toString('latin1');
}

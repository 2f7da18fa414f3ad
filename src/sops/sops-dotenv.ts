import type { SopsEntry, SopsNode } from './sops-tree.js';

/** The prefix of the sops metadata's keys in a dotenv file (`sops_mac=...`). */
const METADATA_PREFIX = 'sops_';

/**
 * A dotenv file as sops reads it: `KEY=value` lines (`\n` in a value is a newline), `#` comments, the
 * metadata flattened into `sops_`-prefixed keys (`sops_age__list_0__map_enc`). Undefined when a line
 * is neither, or when no key is metadata (not a sops file).
 */
export function parseSopsDotenv(text: string): { data: SopsNode; sops: SopsNode } | undefined {
  const data: SopsEntry[] = [];
  const flat = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at < 0) return undefined;
    const key = line.slice(0, at);
    const value = line.slice(at + 1).replaceAll('\\n', '\n');
    if (key.startsWith(METADATA_PREFIX)) flat.set(key.slice(METADATA_PREFIX.length), value);
    else data.push({ key, value: { kind: 'scalar', value: { type: 'str', value } } });
  }
  if (flat.size === 0) return undefined;
  return { data: { kind: 'map', entries: data }, sops: unflatten(flat) };
}

/** The dotenv form of decrypted data: one `KEY=value` a line, newlines written as `\n`. */
export function emitSopsDotenv(node: SopsNode): string {
  if (node.kind !== 'map') return '';
  return node.entries
    .map(({ key, value }) => {
      const text = value.kind === 'scalar' && value.value.type === 'str' ? value.value.value : '';
      return `${key}=${text.replaceAll('\n', '\\n')}\n`;
    })
    .join('');
}

type Plain = string | boolean | Plain[] | { [key: string]: Plain };

/** Unflattens sops's `__map_` / `__list_` keys into the metadata mapping. */
function unflatten(flat: ReadonlyMap<string, string>): SopsNode {
  const root: Record<string, Plain> = {};
  for (const [path, text] of flat) {
    const tokens = path
      .split(/(?=__map_|__list_)/)
      .map((token) =>
        token.startsWith('__list_') ? Number(token.slice('__list_'.length)) : token.replace(/^__map_/, ''),
      );
    // Written as text in dotenv, like every value: the one boolean of the metadata.
    const value: Plain = path === 'mac_only_encrypted' ? text === 'true' : text;
    setPath(root, tokens, value);
  }
  return toNode(root);
}

function setPath(container: Plain, tokens: readonly (string | number)[], value: Plain): void {
  const [head, next, ...rest] = tokens;
  if (head === undefined || typeof container !== 'object') return;
  const slot = container as Record<string | number, Plain>;
  if (next === undefined) {
    slot[head] = value;
    return;
  }
  slot[head] ??= typeof next === 'number' ? [] : {};
  setPath(slot[head], [next, ...rest], value);
}

function toNode(value: Plain): SopsNode {
  if (typeof value === 'string') return { kind: 'scalar', value: { type: 'str', value } };
  if (typeof value === 'boolean') return { kind: 'scalar', value: { type: 'bool', value } };
  if (Array.isArray(value)) return { kind: 'seq', items: Array.from(value, (item) => toNode(item ?? '')) };
  return { kind: 'map', entries: Object.entries(value).map(([key, item]) => ({ key, value: toNode(item) })) };
}

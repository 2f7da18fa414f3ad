/**
 * Git tree objects built byte by byte, as `git mktree` and `git hash-object --literally` let anyone push:
 * entries in the order given (git sorts them; a crafted tree need not), names that git itself would refuse.
 */

export interface RawTreeEntry {
  readonly mode: string;
  /** Raw bytes for names that are not valid UTF-8. */
  readonly name: string | Uint8Array;
  readonly oid: string;
}

/** A tree object's content with the entries in the order given. */
export function treeContent(entries: readonly RawTreeEntry[]): Buffer {
  return Buffer.concat(
    entries.map((entry) =>
      Buffer.concat([
        Buffer.from(`${entry.mode} `),
        typeof entry.name === 'string' ? Buffer.from(entry.name, 'utf8') : Buffer.from(entry.name),
        Buffer.from([0]),
        Buffer.from(entry.oid, 'hex'),
      ]),
    ),
  );
}

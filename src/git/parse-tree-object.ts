import { GitUnsafeTreeError } from './git-error.js';

/** What a tree entry's mode says it is; git knows no other modes. */
type TreeEntryKind = 'file' | 'executable' | 'symlink' | 'tree' | 'gitlink';

export interface TreeEntry {
  readonly name: string;
  readonly kind: TreeEntryKind;
  readonly oid: string;
}

/**
 * The modes git writes, plus the two old forms `git fsck` only warns about (`100664` from git before 1.0,
 * zero-padded `040000` from some tools) and which `git checkout` still reads as a file and a directory.
 */
const KINDS_BY_MODE: ReadonlyMap<string, TreeEntryKind> = new Map([
  ['100644', 'file'],
  ['100664', 'file'],
  ['100755', 'executable'],
  ['120000', 'symlink'],
  ['40000', 'tree'],
  ['040000', 'tree'],
  ['160000', 'gitlink'],
]);

const OID_BYTES = 20;
const SPACE = 0x20;
const NUL = 0x00;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/**
 * The entries of a tree object's content (`<mode> <name>\0<20-byte sha>`, repeated), sorted by the bytes
 * of their names (the order kubectl's filepath.Walk visits a directory in). A crafted tree can hold
 * anything git's own writers never produce, so every entry is checked the way git's fsck and
 * verify_path() check it, and the first problem is thrown naming `dirPath/<name>`.
 */
export function parseTreeObject(content: Uint8Array, dirPath: string): TreeEntry[] {
  const parsed: { entry: TreeEntry; nameBytes: Uint8Array }[] = [];
  const seen = new Set<string>();
  let cursor = 0;
  while (cursor < content.length) {
    const space = content.indexOf(SPACE, cursor);
    const nul = space < 0 ? -1 : content.indexOf(NUL, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + OID_BYTES > content.length) {
      throw new GitUnsafeTreeError(dirPath === '' ? '/' : dirPath, `is a malformed tree object`);
    }
    const mode = lossyUtf8.decode(content.subarray(cursor, space));
    const nameBytes = content.subarray(space + 1, nul);
    const oid = Buffer.from(content.subarray(nul + 1, nul + 1 + OID_BYTES)).toString('hex');
    cursor = nul + 1 + OID_BYTES;

    let name: string;
    try {
      name = utf8.decode(nameBytes);
    } catch (error) {
      throw new GitUnsafeTreeError(joinPath(dirPath, lossyUtf8.decode(nameBytes)), 'is not valid UTF-8', {
        cause: error,
      });
    }
    const entryPath = joinPath(dirPath, name);
    const problem = entryNameProblem(name);
    if (problem !== undefined) throw new GitUnsafeTreeError(entryPath, problem);
    if (seen.has(name)) throw new GitUnsafeTreeError(entryPath, 'appears twice in its tree');
    seen.add(name);
    const kind = KINDS_BY_MODE.get(mode);
    if (kind === undefined) throw new GitUnsafeTreeError(entryPath, `has the unknown mode ${mode}`);
    parsed.push({ entry: { name, kind, oid }, nameBytes });
  }
  return parsed.sort((a, b) => Buffer.compare(a.nameBytes, b.nameBytes)).map(({ entry }) => entry);
}

/** `dir/name`, or `name` at the root. */
export function joinPath(dirPath: string, name: string): string {
  return dirPath === '' ? name : `${dirPath}/${name}`;
}

/**
 * Why git's verify_path() would refuse `name` as a path component, or undefined: empty, `.`, `..`, a
 * separator or NUL, or a name that is `.git` on some file system (any case; NTFS's trailing dots and
 * spaces, alternate data streams and `git~1` short name; HFS+'s ignored code points).
 */
function entryNameProblem(name: string): string | undefined {
  if (name === '') return 'has an empty name';
  if (name === '.' || name === '..') return `is named ${JSON.stringify(name)}`;
  if (name.includes('/')) return 'has a name containing "/"';
  if (name.includes('\0')) return 'has a name containing a NUL byte';
  if (isDotGit(name)) return 'is named like .git';
  return undefined;
}

/** HFS+ ignores these code points when comparing names, so `.g\u200cit` is `.git` there. */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

function isDotGit(name: string): boolean {
  // Every spelling below has a g (no other code point lower-cases to one): most names are done here.
  if (!name.includes('g') && !name.includes('G')) return false;
  const hfs = name.replace(HFS_IGNORED, '').toLowerCase();
  if (hfs === '.git') return true;
  // NTFS drops trailing dots and spaces, and `name:stream` opens a stream of `name`.
  const ntfs = (name.split(':')[0] ?? '').replace(/[. ]+$/, '').toLowerCase();
  return ntfs === '.git' || /^git~[1-9]$/.test(ntfs);
}

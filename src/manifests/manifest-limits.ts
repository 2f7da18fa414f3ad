/**
 * How much manifest text one set may hold, so that a large or hostile repository is refused with a
 * clear message instead of taking the whole controller (and every other ApplySet) down with it.
 */
export interface ManifestLimits {
  /**
   * Bytes of one manifest file, checked before the file is read. Also the most one YAML document
   * may decode to once its aliases are expanded (a document cannot be larger than a file may be).
   */
  readonly maxFileBytes: number;
  /**
   * Bytes of all the files of one set together, checked before each file is read; the decoded
   * documents of the set together may not exceed it either.
   */
  readonly maxSetBytes: number;
}

/** One file of a set as a reader hands it over: read, or refused for its size. */
export interface ManifestFile {
  /** The name messages give the file: from the repository root in the controller, as typed in the CLI. */
  readonly path: string;
  readonly text: string;
  /** Size of the file in bytes, when the reader knows it (otherwise measured from `text`). */
  readonly byteLength?: number;
  /**
   * Set by a reader that refused to read the file for its size (`createManifestReadBudget`); `text`
   * is then empty and the set is refused naming the file.
   */
  readonly unread?: ManifestSizeProblem;
}

const MIB = 1024 * 1024;

/**
 * kubectl itself has no such limits, so these are chosen to stay far above real sets and below
 * what the chart's 512 Mi memory limit can hold:
 * - 10 MiB per file: the API server takes at most 3 MiB per request and etcd 1.5 MiB per object, and
 *   client-side apply cannot store a last-applied annotation over 256 KiB, so no object we can apply
 *   comes near it; 10 MiB still fits the largest single-file bundles (CRD bundles of a few MiB).
 * - 32 MiB per set: decoding alone takes about 4.3 times the text in heap (measured: 20 MiB of
 *   Deployments, 86 MiB), and the engine keeps the last-applied JSON and the live objects beside
 *   it; 32 MiB (about 140 MiB decoded) leaves that room under 512 Mi, 64 MiB would not (the
 *   reported 50 MB file took the process to 700 MiB).
 */
export const DEFAULT_MANIFEST_LIMITS: ManifestLimits = { maxFileBytes: 10 * MIB, maxSetBytes: 32 * MIB };

/** The defaults with the limits a caller set (tests use small ones). */
export function manifestLimits(overrides: Partial<ManifestLimits> = {}): ManifestLimits {
  return { ...DEFAULT_MANIFEST_LIMITS, ...overrides };
}

/** Why a file of a set was refused for its size; `undefined` when it may be read. */
export type ManifestSizeProblem =
  | { readonly kind: 'file-too-large'; readonly detail: string }
  | { readonly kind: 'set-too-large'; readonly detail: string };

/**
 * Whether a file of `bytes` bytes may be read when the files before it in the set took
 * `bytesBefore`. Readers call it with the size the file system or the Git object store reports,
 * before reading the content, so an oversized file is never held in memory.
 */
export function checkManifestFileSize(
  bytes: number,
  bytesBefore: number,
  limits: ManifestLimits = DEFAULT_MANIFEST_LIMITS,
): ManifestSizeProblem | undefined {
  if (bytes > limits.maxFileBytes) {
    return {
      kind: 'file-too-large',
      detail: `the file is ${formatBytes(bytes)}, over the limit of ${formatBytes(limits.maxFileBytes)} per manifest file`,
    };
  }
  if (bytesBefore + bytes > limits.maxSetBytes) {
    return {
      kind: 'set-too-large',
      detail:
        `the files of the set reach ${formatBytes(bytesBefore + bytes)} with this one, over the limit ` +
        `of ${formatBytes(limits.maxSetBytes)} per set; the files after it were not read`,
    };
  }
  return undefined;
}

/**
 * What a reader has taken so far. For each file, before reading it: `refuse` returns undefined when
 * the file may be read (and counts it), or the stand-in to put in the set instead, which
 * `parseManifestSet` reports naming the file. Once the set went over its total, `exhausted` is true
 * and the reader should stop: the set is refused anyway, and the rest need not be read.
 */
export interface ManifestReadBudget {
  refuse(path: string, bytes: number): ManifestFile | undefined;
  readonly exhausted: boolean;
}

export function createManifestReadBudget(
  limits: ManifestLimits = DEFAULT_MANIFEST_LIMITS,
): ManifestReadBudget {
  let taken = 0;
  let exhausted = false;
  return {
    refuse(path, bytes) {
      const problem = checkManifestFileSize(bytes, taken, limits);
      if (problem === undefined) {
        taken += bytes;
        return undefined;
      }
      if (problem.kind === 'set-too-large') exhausted = true;
      return { path, text: '', byteLength: bytes, unread: problem };
    },
    get exhausted() {
      return exhausted;
    },
  };
}

/** Bytes of `text` in UTF-8, without encoding it (the size the file had on disk or in Git). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      // A surrogate pair is one code point of four bytes.
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

export function formatBytes(bytes: number): string {
  if (bytes >= MIB) return `${Number((bytes / MIB).toFixed(1))} MiB`;
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${bytes} bytes`;
}

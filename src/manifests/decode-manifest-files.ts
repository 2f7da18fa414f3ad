import {
  decodeDocuments,
  ManifestDecodeError,
  ManifestExpansionError,
  type DecodedDocument,
  type DecodeLimits,
} from './decode-documents.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-value.js';
import { ManifestError, type ManifestSource } from './manifest-error.js';
import {
  checkManifestFileSize,
  utf8ByteLength,
  type ManifestLimits,
  type ManifestFile,
} from './manifest-limits.js';

/** One object found in the files, or one problem with them. */
export type ManifestEntry =
  | { readonly type: 'object'; readonly value: JsonObject; readonly source: ManifestSource }
  | { readonly type: 'error'; readonly error: ManifestError };

/**
 * What a file's text decoded to, kept across reconciles by the text itself (docs/performance.md, #39):
 * a fleet at rest reads the same files every interval, and decoding their YAML took 6% of a
 * reconcile's CPU. Only decodes that succeeded are kept; a file that failed is decoded again, so its
 * error is the one of its own path and place. What it gives is shared: read it, never change it.
 */
export interface DecodedFileMemo {
  /** The documents the text decoded to, when kept. */
  get(text: string): readonly DecodedDocument[] | undefined;
  /** Keeps them (frozen), the least recently used texts dropped past the bound. */
  keep(text: string, documents: readonly DecodedDocument[]): readonly DecodedDocument[];
}

/**
 * Decodes the files in order within the size limits: a file over its limit is reported and skipped;
 * once the set is over its total (of file bytes, or of decoded content), the files after it are not
 * decoded at all (they would only grow the heap the limit protects), and the problems found so far
 * are all that is reported.
 */
export function decodeManifestFiles(
  files: readonly ManifestFile[],
  limits: ManifestLimits,
  memo?: DecodedFileMemo,
): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  let bytes = 0;
  let decoded = 0;
  for (const file of files) {
    const size = file.byteLength ?? utf8ByteLength(file.text);
    const problem = file.unread ?? checkManifestFileSize(size, bytes, limits);
    if (problem !== undefined) {
      const source = { file: file.path, documentIndex: undefined };
      entries.push({
        type: 'error',
        error: new ManifestError(problem.kind, source, undefined, problem.detail),
      });
      if (problem.kind === 'set-too-large') return entries;
      continue;
    }
    bytes += size;
    const result = decodeFile(
      file,
      { maxDocumentBytes: limits.maxFileBytes, maxTotalBytes: limits.maxSetBytes, decodedBefore: decoded },
      memo,
    );
    entries.push(...result.entries);
    if (result.setTooLarge) return entries;
    decoded += result.contentBytes;
  }
  return entries;
}

function decodeFile(
  file: ManifestFile,
  limits: DecodeLimits,
  memo: DecodedFileMemo | undefined,
): { entries: ManifestEntry[]; contentBytes: number; setTooLarge: boolean } {
  let documents = memo?.get(file.text);
  // A kept decoding is used only well within this set's limits; at or past one, decoding again says
  // which, as the first time would have.
  if (documents === undefined || !withinLimits(documents, limits)) {
    try {
      documents = decodeDocuments(file.text, file.path, limits);
    } catch (error) {
      return { entries: [decodeProblem(file, error)], contentBytes: 0, setTooLarge: isSetTooLarge(error) };
    }
    documents = memo?.keep(file.text, documents) ?? documents;
  }
  const entries = documents.flatMap((document): ManifestEntry[] => {
    const source: ManifestSource = { file: file.path, documentIndex: document.index };
    // A document holding only comments or `---` decodes to null: kubectl skips it silently.
    if (document.value === null) return [];
    if (!isJsonObject(document.value)) {
      return [notAnObject(source, document.value)];
    }
    return flattenList(document.value, source);
  });
  const contentBytes = documents.reduce((sum, document) => sum + document.contentBytes, 0);
  return { entries, contentBytes, setTooLarge: false };
}

/** Within a set's limits by a margin: no document, nor the set with it, at its bound. */
function withinLimits(documents: readonly DecodedDocument[], limits: DecodeLimits): boolean {
  let total = limits.decodedBefore ?? 0;
  for (const { contentBytes } of documents) {
    total += contentBytes;
    if (contentBytes >= limits.maxDocumentBytes || total >= limits.maxTotalBytes) return false;
  }
  return true;
}

function isSetTooLarge(error: unknown): boolean {
  return error instanceof ManifestExpansionError && error.kind === 'set-too-large';
}

/** The file's problem, for the decoder's error. */
function decodeProblem(file: ManifestFile, error: unknown): ManifestEntry {
  if (error instanceof ManifestExpansionError) {
    const source = { file: file.path, documentIndex: error.documentIndex };
    return {
      type: 'error',
      error: new ManifestError(error.kind, source, undefined, error.detail, { cause: error }),
    };
  }
  // The decoder's error names the file, document and place itself: they become the source, so the
  // line names the file once (not `bad.yaml: bad.yaml (document 0)`).
  const problem =
    error instanceof ManifestDecodeError
      ? new ManifestError('decode-failed', decodeErrorSource(file.path, error), undefined, error.reason, {
          cause: error,
        })
      : new ManifestError(
          'decode-failed',
          { file: file.path, documentIndex: undefined },
          undefined,
          error instanceof Error ? error.message : String(error),
          { cause: error },
        );
  return { type: 'error', error: problem };
}

function decodeErrorSource(file: string, error: ManifestDecodeError): ManifestSource {
  return {
    file,
    documentIndex: error.documentIndex,
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.column === undefined ? {} : { column: error.column }),
  };
}

/**
 * `kind: List` (and the typed `FooList` kinds) carry their objects in `items`; kubectl's resource
 * builder flattens any list type it meets, so do we.
 */
function flattenList(value: JsonObject, source: ManifestSource): ManifestEntry[] {
  const kind = value['kind'];
  const items = value['items'];
  if (typeof kind !== 'string' || !kind.endsWith('List') || !Array.isArray(items)) {
    return [{ type: 'object', value, source }];
  }
  return items.flatMap((item, itemIndex): ManifestEntry[] => {
    const itemSource: ManifestSource = {
      ...source,
      itemIndex,
      ...(kind === 'List' ? {} : { listKind: kind }),
    };
    if (item === null) return [];
    if (!isJsonObject(item)) return [notAnObject(itemSource, item)];
    // kubectl also validates the items of a List against their kind's schema before sending: that
    // needs the server's OpenAPI, so it happens before the first write (apply/validate-list-items.ts).
    return flattenList(item, itemSource);
  });
}

function notAnObject(source: ManifestSource, value: JsonValue): ManifestEntry {
  const what = Array.isArray(value)
    ? 'a sequence'
    : `a ${typeof value === 'bigint' ? 'number' : typeof value}`;
  return {
    type: 'error',
    error: new ManifestError('not-an-object', source, undefined, `expected an object, found ${what}`),
  };
}

import {
  decodeDocuments,
  ManifestDecodeError,
  ManifestExpansionError,
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
 * Decodes the files in order within the size limits: a file over its limit is reported and skipped;
 * once the set is over its total (of file bytes, or of decoded content), the files after it are not
 * decoded at all (they would only grow the heap the limit protects), and the problems found so far
 * are all that is reported.
 */
export function decodeManifestFiles(files: readonly ManifestFile[], limits: ManifestLimits): ManifestEntry[] {
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
    const result = decodeFile(file, {
      maxDocumentBytes: limits.maxFileBytes,
      maxTotalBytes: limits.maxSetBytes,
      decodedBefore: decoded,
    });
    entries.push(...result.entries);
    if (result.setTooLarge) return entries;
    decoded += result.contentBytes;
  }
  return entries;
}

function decodeFile(
  file: ManifestFile,
  limits: DecodeLimits,
): { entries: ManifestEntry[]; contentBytes: number; setTooLarge: boolean } {
  let documents;
  try {
    documents = decodeDocuments(file.text, file.path, limits);
  } catch (error) {
    if (error instanceof ManifestExpansionError) {
      const source = { file: file.path, documentIndex: error.documentIndex };
      const problem = new ManifestError(error.kind, source, undefined, error.detail, { cause: error });
      return {
        entries: [{ type: 'error', error: problem }],
        contentBytes: 0,
        setTooLarge: error.kind === 'set-too-large',
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
    return { entries: [{ type: 'error', error: problem }], contentBytes: 0, setTooLarge: false };
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

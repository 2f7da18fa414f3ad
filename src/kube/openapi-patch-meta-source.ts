import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { GroupVersionKind } from '../manifests/object-ref.js';
import { builtinPatchMeta } from '../merge/builtin-patch-meta.js';
import { readOpenApiPatchInfo, type OpenApiPatchInfo } from '../merge/openapi-patch-meta.js';
import type { PatchMeta } from '../merge/patch-meta.js';
import { KubeApiError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';
import { LruMap } from './lru-map.js';
import type { OpenApiDocumentStore, SizedOpenApiDocument } from './openapi-disk-cache.js';

/**
 * The one lookup the apply engine needs: how to patch a kind. Strategic merge metadata for kinds
 * whose PATCH accepts `application/strategic-merge-patch+json`, `json-merge` for the rest (custom
 * resources), as kubectl's patcher decides (docs/merge-semantics.md#8-patch-metadata).
 */
export interface PatchMetaSource {
  metaFor(gvk: GroupVersionKind, signal?: AbortSignal): Promise<PatchMeta | 'json-merge'>;
  /**
   * The OpenAPI v3 document of the kind's group-version, for the client-side validation of List items
   * (`findUnknownFields`); undefined when the server serves no v3 document for it.
   */
  schemaDocumentFor?(gvk: GroupVersionKind, signal?: AbortSignal): Promise<JsonValue | undefined>;
}

export interface OpenApiPatchMetaSourceOptions {
  /**
   * The server to read; the source caches per client, so use one source per server. The answers do
   * not depend on the user (`/openapi/*` is open to every authenticated user, `system:discovery`), so
   * the controller shares one source between every identity it impersonates.
   */
  readonly client: KubeClient;
  /**
   * How long the OpenAPI v3 index is trusted before it is read again (the group-version documents it
   * points at carry a content hash in their URLs, so they never go stale themselves); default 10 min.
   * A long-running controller thus sees a changed schema (a server upgrade, a CRD's new version).
   */
  readonly indexMaxAgeMs?: number;
  /** Documents kept, the least recently used dropped past it; default 256. */
  readonly maxDocuments?: number;
  /**
   * What the kept documents may weigh together, as the bytes of their bodies; default 64 MiB. One
   * group-version of large CRDs, or the whole v2 document, can parse to tens of MiB of heap, so a count
   * alone does not bound what a long-running controller keeps.
   */
  readonly maxDocumentBytes?: number;
  readonly now?: () => number;
  /**
   * Where documents named by their content hash are kept between runs (the command's disk cache,
   * createOpenApiDiskCache); such a document found there is not downloaded.
   */
  readonly store?: OpenApiDocumentStore;
  /**
   * Told once per fetch that failed for another reason than "not served", before the source falls
   * back to the next step; kubectl prints a warning in the same places.
   */
  readonly onFetchError?: (path: string, error: unknown) => void;
}

/**
 * Patch metadata from the server's OpenAPI, in kubectl's order (docs/merge-semantics.md#8-patch-metadata):
 * 1. OpenAPI v3: `/openapi/v3` lists the group-versions, then the group-version document;
 * 2. OpenAPI v2 (`/openapi/v2`) when v3 is not served or does not know the group-version;
 * 3. the compiled-in table (`builtinPatchMeta`) when the server cannot be read or has no schema for
 *    the kind, and JSON merge for kinds the table does not know either.
 * A document the server answered is cached (kubectl too reads it once per invocation): a
 * group-version document, whose URL names its content hash, until the bound drops it; the v3 index
 * for `indexMaxAgeMs`. A failed fetch is not cached, so the next object tries again.
 */
export function createOpenApiPatchMetaSource(options: OpenApiPatchMetaSourceOptions): PatchMetaSource {
  const answered = createV3Answers();
  const documents = createDocumentCache(options, (key) => answered.dropDocument(key));
  const fetchDocument = documents.fetch;
  // What a document says of a kind, read once per document and kind: reading it scans the document's
  // paths and schemas, and an engine is made per reconcile, so each run of a fleet asked again.
  const kindInfos = new WeakMap<object, Map<string, OpenApiPatchInfo | undefined>>();
  const kindInfo = (document: JsonValue, gvk: GroupVersionKind): OpenApiPatchInfo | undefined => {
    if (!isJsonObject(document)) return undefined;
    let infos = kindInfos.get(document);
    if (infos === undefined) kindInfos.set(document, (infos = new Map()));
    const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
    if (!infos.has(key)) infos.set(key, knownKind(readOpenApiPatchInfo(document, gvk), document, gvk));
    return infos.get(key);
  };

  /** v3: the index names each group-version's document with a content hash in its URL. */
  const v3Location = async (gvk: GroupVersionKind, signal?: AbortSignal) => {
    const groupVersion = gvk.group === '' ? `api/${gvk.version}` : `apis/${gvk.group}/${gvk.version}`;
    let url = documentUrl(await fetchDocument('/openapi/v3', {}, signal), groupVersion);
    if (url === undefined) {
      // A CRD installed after the index was read: read the index again once before giving up on v3.
      documents.dropIndex();
      url = documentUrl(await fetchDocument('/openapi/v3', {}, signal), groupVersion);
    }
    return url;
  };

  const v3Document = async (gvk: GroupVersionKind, signal?: AbortSignal): Promise<JsonValue | undefined> => {
    const url = await v3Location(gvk, signal);
    return url === undefined ? undefined : fetchDocument(url.path, url.query, signal);
  };

  /** What v3 says of the kind, and the key of the document that says it. */
  const fromV3 = async (gvk: GroupVersionKind, signal?: AbortSignal) => {
    const url = await v3Location(gvk, signal);
    if (url === undefined) return undefined;
    const document = await fetchDocument(url.path, url.query, signal);
    const info = document === undefined ? undefined : kindInfo(document, gvk);
    return info === undefined ? undefined : { info, documentKey: cacheKey(url.path, url.query) };
  };

  const fromV2 = async (
    gvk: GroupVersionKind,
    signal?: AbortSignal,
  ): Promise<OpenApiPatchInfo | undefined> => {
    const document = await fetchDocument('/openapi/v2', {}, signal);
    return document === undefined ? undefined : kindInfo(document, gvk);
  };

  return {
    async metaFor(gvk, signal) {
      signal?.throwIfAborted();
      const kind = `${gvk.group}/${gvk.version}/${gvk.kind}`;
      const kept = answered.get(kind);
      // Kept while the index it came through is the one in use, and its document kept.
      if (kept !== undefined && documents.current(kept.indexRead, kept.documentKey)) return kept.meta;
      const readBefore = documents.indexRead();
      const v3 = await fromV3(gvk, signal);
      if (v3 !== undefined) {
        // kubectl goes on to v2 when v3 does not offer a strategic merge patch; when v3 already said
        // the kind takes none (a custom resource), v2 would only say it again, so skip its large download.
        const { info, documentKey } = v3;
        const meta =
          info.strategicMerge && info.meta !== undefined
            ? info.meta
            : (builtinPatchMeta(gvk) ?? 'json-merge');
        // Not when the index was read again meanwhile: this answer may come from the one before.
        if (documents.indexRead() === readBefore) {
          answered.keep(kind, { indexRead: readBefore, documentKey, meta });
        }
        return meta;
      }
      const v2 = await fromV2(gvk, signal);
      if (v2?.strategicMerge === true && v2.meta !== undefined) return v2.meta;
      // The compiled-in types: kubectl's scheme knows every built-in kind and no custom resource.
      return builtinPatchMeta(gvk) ?? 'json-merge';
    },
    schemaDocumentFor: v3Document,
  };
}

/**
 * The documents read, as promises so concurrent lookups of one share a single request, bounded in count
 * and weight; the v3 index is read again once older than `indexMaxAgeMs`.
 */
function createDocumentCache(options: OpenApiPatchMetaSourceOptions, onEvict: (key: string) => void) {
  const now = options.now ?? Date.now;
  const indexMaxAgeMs = options.indexMaxAgeMs ?? DEFAULT_OPENAPI_INDEX_MAX_AGE_MS;
  const documents = new LruMap<string, Promise<JsonValue | undefined>>(options.maxDocuments ?? 256, {
    maxWeight: options.maxDocumentBytes ?? DEFAULT_MAX_OPENAPI_DOCUMENT_BYTES,
    onEvict,
  });
  let indexReadAt = Number.NEGATIVE_INFINITY;
  // Counts the index's reads: an answer is kept for the read it came through.
  let indexRead = 0;

  /** The document at `path`; undefined when the server does not serve it (404) or cannot be read. */
  const fetch = (path: string, query: Record<string, string>, signal?: AbortSignal) => {
    const key = cacheKey(path, query);
    if (key === INDEX_KEY) {
      if (now() - indexReadAt >= indexMaxAgeMs) documents.delete(INDEX_KEY);
      if (!documents.has(INDEX_KEY)) indexReadAt = now();
    }
    const cached = documents.get(key);
    if (cached !== undefined) return cached;
    const pending: Promise<JsonValue | undefined> = download(options, path, query, signal).then(
      ({ document, bytes }) => {
        // Weighed by its body as received (or its file as read): no second pass over a document of MiBs.
        if (documents.peek(key) === pending) documents.setWeight(key, bytes);
        return document;
      },
      (error: unknown) => {
        if (documents.peek(key) === pending) documents.delete(key);
        if (signal?.aborted) throw error;
        if (!(error instanceof KubeApiError && error.notFound)) options.onFetchError?.(path, error);
        return undefined;
      },
    );
    documents.set(key, pending);
    if (key === INDEX_KEY) indexRead += 1;
    return pending;
  };

  return {
    fetch,
    dropIndex: () => void documents.delete(INDEX_KEY),
    indexRead: () => indexRead,
    /** Whether that read of the index is still the one in use, and that document still kept. */
    current: (read: number, documentKey: string) =>
      read === indexRead &&
      now() - indexReadAt < indexMaxAgeMs &&
      documents.has(INDEX_KEY) &&
      documents.get(documentKey) !== undefined,
  };
}

const DEFAULT_OPENAPI_INDEX_MAX_AGE_MS = 10 * 60_000;
/** Kinds whose answer is kept: more than a server with many CRDs serves. */
const MAX_KINDS_ANSWERED = 4096;

/**
 * What v3 answered per kind, with the document it was read from and the index that named it. Every
 * object of every reconcile asks, and the answer can only change with the index (the documents it names
 * carry their content's hash), so it is kept while that index is in use and that document kept. Answers
 * from v2 or the built-in table are not kept: they follow a v3 that could not be read, which the next
 * object tries again. An answer holds parts of its document, so it goes with it: the bound on documents
 * bounds the answers too.
 */
function createV3Answers() {
  const answers = new LruMap<string, V3Answer>(MAX_KINDS_ANSWERED);
  return {
    get: (kind: string) => answers.get(kind),
    keep: (kind: string, answer: V3Answer) => void answers.set(kind, answer),
    dropDocument: (documentKey: string) => {
      for (const kind of answers.keys()) {
        if (answers.peek(kind)?.documentKey === documentKey) answers.delete(kind);
      }
    },
  };
}

interface V3Answer {
  /** The read of the index it came through (`indexRead`). */
  readonly indexRead: number;
  /** The `documents` key of the group-version document it was read from. */
  readonly documentKey: string;
  readonly meta: PatchMeta | 'json-merge';
}
const DEFAULT_MAX_OPENAPI_DOCUMENT_BYTES = 64 * 1024 * 1024;

/**
 * From the store when the URL names the content's hash and the store has it, else from the server;
 * with the byte length of the text it was decoded from.
 */
async function download(
  options: OpenApiPatchMetaSourceOptions,
  path: string,
  query: Record<string, string>,
  signal?: AbortSignal,
): Promise<SizedOpenApiDocument> {
  const { client, store } = options;
  const storeKey =
    store !== undefined && query['hash'] !== undefined ? client.server + cacheKey(path, query) : '';
  const stored = storeKey === '' ? undefined : await store?.read(storeKey);
  if (stored !== undefined) return stored;
  let bytes = 0;
  const document = await client.request({
    method: 'GET',
    path,
    query,
    signal,
    onBodyBytes: (received) => (bytes = received),
  });
  if (storeKey !== '') await store?.write(storeKey, document);
  return { document, bytes };
}
const INDEX_KEY = cacheKey('/openapi/v3', {});

function cacheKey(path: string, query: Record<string, string>): string {
  return `${path}?${new URLSearchParams(query).toString()}`;
}

function documentUrl(
  index: JsonValue | undefined,
  groupVersion: string,
): { path: string; query: Record<string, string> } | undefined {
  if (!isJsonObject(index) || !isJsonObject(index.paths)) return undefined;
  const entry = index.paths[groupVersion];
  const relative = isJsonObject(entry) ? entry.serverRelativeURL : undefined;
  if (typeof relative !== 'string') return undefined;
  const url = new URL(relative, 'http://server.invalid');
  return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
}

/** The info, or undefined when the document says nothing about the kind (no PATCH path, no schema). */
function knownKind(
  info: OpenApiPatchInfo,
  document: JsonValue,
  gvk: GroupVersionKind,
): OpenApiPatchInfo | undefined {
  if (info.strategicMerge || info.meta !== undefined) return info;
  return hasPatchOperation(document, gvk) ? info : undefined;
}

function hasPatchOperation(document: JsonValue, gvk: GroupVersionKind): boolean {
  if (!isJsonObject(document) || !isJsonObject(document.paths)) return false;
  return Object.values(document.paths).some((item) => {
    const patch = isJsonObject(item) ? item.patch : undefined;
    const named = isJsonObject(patch) ? patch['x-kubernetes-group-version-kind'] : undefined;
    return (
      isJsonObject(named) &&
      named.group === gvk.group &&
      named.version === gvk.version &&
      named.kind === gvk.kind
    );
  });
}

/**
 * The command's OpenAPI documents on disk, as kubectl keeps its discovery under `~/.kube/cache`, so
 * repeated `applyset apply` runs do not download the same schema again (`api/v1` alone is about a
 * megabyte). Only documents whose URL names their content hash are stored (the v3 group-version
 * documents, `...?hash=<sha512>`): the index, read fresh on every run, says which hash is current, so a
 * server upgrade or a changed CRD names another file and a stale one is never read. The key includes
 * the server's URL. A cache only: a file that cannot be read or parsed is a miss, a failed write is
 * skipped, and the oldest files go past `maxFiles`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { JsonValue } from '../manifests/json-value.js';

/** A document and the byte length of the text it was parsed from: what it weighs in a cache. */
export interface SizedOpenApiDocument {
  readonly document: JsonValue;
  readonly bytes: number;
}

/** Where the patch-metadata source keeps documents between runs. */
export interface OpenApiDocumentStore {
  /** The document stored under `key`, weighed by its file's length; undefined for a miss. */
  read(key: string): Promise<SizedOpenApiDocument | undefined>;
  write(key: string, document: JsonValue): Promise<void>;
}

/**
 * `<cache root>/openapi`, the cache root as the control-plane scripts find it: `APPLYSET_CACHE_DIR`,
 * else `$XDG_CACHE_HOME/applyset-controller`, else `~/.cache/applyset-controller`.
 */
export function openApiCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  const root =
    nonEmpty(env['APPLYSET_CACHE_DIR']) ??
    join(nonEmpty(env['XDG_CACHE_HOME']) ?? join(env['HOME'] ?? homedir(), '.cache'), 'applyset-controller');
  return join(root, 'openapi');
}

export function createOpenApiDiskCache(dir: string, maxFiles = 100): OpenApiDocumentStore {
  const fileOf = (key: string) =>
    join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.json`);
  return {
    async read(key) {
      try {
        const text = await readFile(fileOf(key));
        // eslint-disable-next-line parse-door/one-parse-door -- the controller's own cache of documents it downloaded from its API server
        return { document: JSON.parse(text.toString('utf8')) as JsonValue, bytes: text.length };
      } catch {
        // Absent, unreadable or cut short: a miss, and the download that follows writes it anew.
        return undefined;
      }
    },
    async write(key, document) {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        // Written aside and renamed: a concurrent run never reads half a file.
        const partial = join(dir, `.${randomUUID()}.partial`);
        await writeFile(partial, JSON.stringify(document), { mode: 0o600 });
        await rename(partial, fileOf(key));
        await dropOldest(dir, maxFiles);
      } catch {
        // The document is in hand; failing to keep it only costs the next run a download.
      }
    },
  };
}

async function dropOldest(dir: string, maxFiles: number): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  if (names.length <= maxFiles) return;
  const aged = await Promise.all(
    names.map(async (name) => ({ name, mtime: (await stat(join(dir, name))).mtimeMs })),
  );
  aged.sort((a, b) => a.mtime - b.mtime);
  await Promise.all(
    aged.slice(0, aged.length - maxFiles).map(({ name }) => rm(join(dir, name), { force: true })),
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A directory of extracted archives, one directory per archive digest (`sha256-<hex>`), shared by every
 * ApplySet naming the same content: an OCI artifact's layer (oci-source.ts), a Helm repository's chart
 * archive (src/source/helm-repository/). Written once and renamed into place, kept under a byte budget.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** An extraction's scratch older than this was left by a process that stopped mid-way. */
const STALE_SCRATCH_MS = 10 * 60_000;

/** Extracts into a directory of its own, then renames it into place: a half-written layer is never read. */
export async function extractInto(
  directory: string,
  extract: (target: string) => Promise<unknown>,
): Promise<void> {
  const target = `${directory}.tmp-${randomBytes(6).toString('hex')}`;
  await mkdir(target, { recursive: true });
  try {
    await extract(target);
    await rename(target, directory).catch(async (error: unknown) => {
      // Another reconcile extracted the same layer first: its directory is as good as this one.
      if (!(await isDirectory(directory))) throw error;
    });
  } finally {
    await rm(target, { recursive: true, force: true });
  }
}

export async function isDirectory(directory: string): Promise<boolean> {
  try {
    return (await stat(directory)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Keeps the extracted layers under `maxBytes` in all (and `keep`, just extracted, whatever its size),
 * removing the least recently extracted first, and the scratch of an extraction a crash left behind.
 */
export async function evictOldest(cacheDir: string, maxBytes: number, keep: string): Promise<void> {
  const names = await readdir(cacheDir);
  const layers: { path: string; mtimeMs: number; bytes: number }[] = [];
  for (const name of names) {
    const entry = path.join(cacheDir, name);
    const info = await stat(entry).catch(() => undefined);
    if (info === undefined) continue;
    if (name.includes('.tmp-')) {
      if (Date.now() - info.mtimeMs > STALE_SCRATCH_MS) await rm(entry, { recursive: true, force: true });
      continue;
    }
    if (name.startsWith('sha256-'))
      layers.push({ path: entry, mtimeMs: info.mtimeMs, bytes: await bytesUnder(entry) });
  }
  let total = layers.reduce((sum, layer) => sum + layer.bytes, 0);
  for (const layer of layers.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= maxBytes) break;
    if (layer.path === keep) continue;
    await rm(layer.path, { recursive: true, force: true });
    total -= layer.bytes;
  }
}

/** The bytes of the files under `dir` (an extracted layer holds files and directories only). */
async function bytesUnder(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir, { recursive: true })) {
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info?.isFile() === true) bytes += info.size;
  }
  return bytes;
}

import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  createManifestReadBudget,
  manifestLimits,
  type ManifestLimits,
  type ManifestFile,
} from '../manifests/manifest-limits.js';

const MANIFEST_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

export interface ReadManifestDirectoryOptions {
  readonly signal?: AbortSignal;
  /** Size limits; the defaults of `DEFAULT_MANIFEST_LIMITS` where not given. */
  readonly limits?: Partial<ManifestLimits>;
  /**
   * Descend into subdirectories (default true). `applyset apply` passes false unless `-R` is given,
   * as `kubectl apply -f DIR` reads only the files directly in DIR.
   */
  readonly recursive?: boolean;
}

/**
 * Reads every `.yaml`, `.yml` and `.json` file under `root`, recursively, the way kubectl's
 * `apply -f DIR -R` visits them: depth first, the entries of each directory in byte order of their
 * names (Go's filepath.Walk), so the order is the same on every machine. Paths in the result are
 * relative to `root`, with '/' separators. A `root` that is a file is read whatever its extension,
 * as `kubectl apply -f FILE` does.
 *
 * Symbolic links are followed only when they resolve inside `root` (a Git checkout must not make us
 * read the host's files), and each real directory is visited once, so a link loop terminates.
 *
 * Each file's size is checked before it is read: a file over the limit is listed unread, for
 * `parseManifestSet` to refuse naming it, and once the set is over its total nothing more is read.
 */
export async function readManifestDirectory(
  root: string,
  options: ReadManifestDirectoryOptions = {},
): Promise<ManifestFile[]> {
  const { signal } = options;
  signal?.throwIfAborted();
  const budget = createManifestReadBudget(manifestLimits(options.limits));
  const readWithin = async (target: string, relativePath: string, bytes: number): Promise<ManifestFile> =>
    budget.refuse(relativePath, bytes) ?? {
      path: relativePath,
      text: await readFile(target, { encoding: 'utf8', signal }),
    };
  const rootInfo = await stat(root);
  if (!rootInfo.isDirectory()) return [await readWithin(root, path.basename(root), rootInfo.size)];
  const realRoot = await realpath(root);
  const visited = new Set<string>([realRoot]);
  const files: ManifestFile[] = [];

  const walk = async (directory: string, relative: string): Promise<void> => {
    signal?.throwIfAborted();
    const names = (await readdir(directory)).sort(compareBytes);
    for (const name of names) {
      if (budget.exhausted) return;
      const absolute = path.join(directory, name);
      const relativePath = relative === '' ? name : `${relative}/${name}`;
      const info = await lstat(absolute);
      let target = absolute;
      let isDirectory = info.isDirectory();
      let isFile = info.isFile();
      let size = info.size;
      if (info.isSymbolicLink()) {
        const resolved = await resolveInside(absolute, realRoot);
        if (resolved === undefined) continue;
        target = resolved.path;
        isDirectory = resolved.isDirectory;
        isFile = resolved.isFile;
        size = resolved.size;
      }
      if (isDirectory) {
        if (options.recursive === false) continue;
        const real = await realpath(target);
        if (visited.has(real)) continue;
        visited.add(real);
        await walk(target, relativePath);
      } else if (isFile && MANIFEST_EXTENSIONS.has(path.extname(name).toLowerCase())) {
        files.push(await readWithin(target, relativePath, size));
      }
    }
  };

  await walk(root, '');
  return files;
}

async function resolveInside(
  link: string,
  realRoot: string,
): Promise<{ path: string; isDirectory: boolean; isFile: boolean; size: number } | undefined> {
  let real: string;
  try {
    real = await realpath(link);
  } catch (error) {
    // A dangling link is not a manifest; anything else (permissions, I/O) is a real failure.
    if (isNodeError(error) && (error.code === 'ENOENT' || error.code === 'ELOOP')) return undefined;
    throw error;
  }
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return undefined;
  const info = await stat(real);
  return { path: real, isDirectory: info.isDirectory(), isFile: info.isFile(), size: info.size };
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  // Duck-typed: errors from node:fs may come from another realm (test VMs), failing instanceof.
  return typeof error === 'object' && error !== null && 'code' in error;
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

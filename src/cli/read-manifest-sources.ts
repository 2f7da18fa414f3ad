import { excludeFiles } from '../manifests/exclude-files.js';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { readManifestDirectory } from '../source/read-manifest-directory.js';
import { UsageError } from './parse-command-line.js';

/** kubectl names standard input `STDIN` in its messages. */
const STDIN_NAME = 'STDIN';

export interface ManifestSourceOptions {
  readonly cwd: string;
  /** `-R`: descend into subdirectories of a directory given with `-f`. */
  readonly recursive: boolean;
  readonly stdin: NodeJS.ReadableStream | undefined;
  readonly signal?: AbortSignal;
  /** `--exclude`: gitignore-style patterns, matched against paths below each `-f` directory. */
  readonly exclude?: readonly string[];
}

/**
 * Reads every `-f` in the order given, as `kubectl apply -f a -f b` does: a file whatever its
 * extension, a directory's `.yaml`, `.yml` and `.json` files (its subdirectories too with `-R`), `-`
 * for standard input. Each file is named as kubectl names it, the `-f` argument joined with its path
 * below it, so two directories holding a file of the same name are told apart in every message.
 */
export async function readManifestSources(
  filenames: readonly string[],
  options: ManifestSourceOptions,
): Promise<ManifestFile[]> {
  if (filenames.filter((name) => name === '-').length > 1) {
    throw new UsageError('-f - (standard input) can be given only once');
  }
  const files: ManifestFile[] = [];
  for (const filename of filenames) {
    if (filename === '-') {
      if (options.stdin === undefined) throw new UsageError('-f -: there is no standard input to read');
      files.push({ path: STDIN_NAME, text: await readAll(options.stdin) });
      continue;
    }
    const absolute = path.resolve(options.cwd, filename);
    let directory: boolean;
    try {
      directory = (await stat(absolute)).isDirectory();
    } catch (error) {
      if (isNotFound(error)) throw new UsageError(`the path "${filename}" does not exist`);
      throw error;
    }
    const read = await readManifestDirectory(absolute, {
      recursive: options.recursive,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    // A file named with -f is read whatever the patterns say; a directory's files are matched by
    // their path below it.
    const { kept } = directory ? excludeFiles(read, options.exclude ?? []) : { kept: read };
    for (const file of kept) {
      files.push({ ...file, path: directory ? path.join(filename, file.path) : filename });
    }
  }
  return files;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOENT';
}

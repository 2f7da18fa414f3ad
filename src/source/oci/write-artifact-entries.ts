import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Extract, Header } from 'tar-stream';
import { IntentError } from '../../errors/intent-error.js';
import { artifactEntryPath } from './artifact-entry-path.js';
import { describeArtifactLimit, type ArtifactLimits } from './artifact-limits.js';
import { ArtifactRefusedError } from './artifact-refused-error.js';

interface ExtractionTarget {
  readonly targetDir: string;
  readonly limits: ArtifactLimits;
  /** The artifact, for messages. */
  readonly describe: string;
}

type EntryKind = 'file' | 'directory';

/** One entry of the archive: its header and a stream of its content. */
type Entry = Extract extends AsyncIterable<infer Source> ? Source : never;

/**
 * A file is created, never opened: O_EXCL refuses a path that exists and O_NOFOLLOW a link in its
 * place. Nothing here creates a link, so every directory on the way is one this extraction made.
 */
const CREATE_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes the archive's entries under `targetDir` as they come, one at a time, and counts them. Files
 * and directories only; their modes are 0644, or 0755 for a file with an execute bit (never setuid,
 * setgid, sticky or the tar's other bits), narrowed by the umask. A file path given twice is refused,
 * not last-wins (which copy a user sees would depend on the tool that reads it); a directory listed
 * twice is one directory. Throws ArtifactRefusedError at the first entry over a limit or unsafe.
 */
export async function writeArtifactEntries(
  entries: AsyncIterator<Entry>,
  target: ExtractionTarget,
): Promise<{ files: number; bytes: number }> {
  const { limits, describe } = target;
  const kinds = new Map<string, EntryKind>();
  // The directories made so far ('' is targetDir), so that each is made once.
  const made = new Set<string>(['']);
  let count = 0;
  let files = 0;
  let bytes = 0;
  for (;;) {
    const step = await nextEntry(entries, describe);
    if (step.done === true) return { files, bytes };
    const entry = step.value;
    count += 1;
    if (count > limits.maxFiles) {
      throw new ArtifactRefusedError(
        'ArtifactTooLarge',
        describe,
        `holds more than ${describeArtifactLimit(limits, 'maxFiles')}`,
      );
    }
    const { kind, path } = planEntry(entry.header, kinds, target);
    if (kind === 'directory') {
      await makeDirectory(target.targetDir, path, made);
      entry.resume();
    } else {
      await makeDirectory(target.targetDir, path.slice(0, Math.max(path.lastIndexOf('/'), 0)), made);
      bytes += await writeFileEntry(entry, join(target.targetDir, path), path, target);
      files += 1;
    }
  }
}

async function makeDirectory(targetDir: string, path: string, made: Set<string>): Promise<void> {
  if (made.has(path)) return;
  await mkdir(join(targetDir, path), { recursive: true, mode: 0o755 });
  made.add(path);
}

async function nextEntry(entries: AsyncIterator<Entry>, describe: string): Promise<IteratorResult<Entry>> {
  try {
    return await entries.next();
  } catch (error) {
    if (error instanceof IntentError) throw error;
    throw new ArtifactRefusedError(
      'ArtifactInvalid',
      describe,
      `is not a valid tar archive: ${tarProblem(error)}`,
      {
        cause: error,
      },
    );
  }
}

/** tar-stream's errors, in words a user can act on. */
const TAR_PROBLEMS: ReadonlyArray<readonly [string, string]> = [
  ['Invalid tar header. Maybe', "a header's checksum does not match"],
  ['Invalid tar header: unknown format', 'a header is in no format tar knows (ustar, pax, GNU)'],
  ['Header exceeds max size', 'a pax or long-name header is larger than 4 MiB'],
  ['Invalid header', 'a header declares an invalid size'],
  ['Unexpected end of data', 'it is cut short'],
];

function tarProblem(error: unknown): string {
  const { message } = (error ?? {}) as { message?: unknown };
  if (typeof message !== 'string') return String(error);
  return TAR_PROBLEMS.find(([start]) => message.startsWith(start))?.[1] ?? message;
}

/** Where an entry goes and what it is, once it is known to be safe, new and within the limits. */
function planEntry(
  header: Header,
  kinds: Map<string, EntryKind>,
  { limits, describe }: ExtractionTarget,
): { kind: EntryKind; path: string } {
  const unsafe = (problem: string) =>
    new ArtifactRefusedError(
      'ArtifactUnsafe',
      describe,
      `has an unsafe entry ${JSON.stringify(header.name)}: ${problem}`,
    );
  const where = artifactEntryPath(header.name);
  if ('problem' in where) throw unsafe(where.problem);
  const { path } = where;
  const kind = entryKind(header);
  if (kind !== 'file' && kind !== 'directory') throw unsafe(kind.problem);
  if (kind === 'file' && path === '') throw unsafe('it is a file in place of the root');
  const names = path === '' ? [] : path.split('/');
  for (let depth = 1; depth < names.length; depth += 1) {
    const parent = names.slice(0, depth).join('/');
    if (kinds.get(parent) === 'file')
      throw unsafe(`it lies under ${JSON.stringify(parent)}, which is a file`);
    kinds.set(parent, 'directory');
  }
  const earlier = kinds.get(path);
  if (earlier === 'file') throw unsafe('the archive holds that path twice');
  if (earlier === 'directory' && kind === 'file')
    throw unsafe('the archive holds that path as a directory too');
  kinds.set(path, kind);
  if (kind === 'file' && (header.size ?? 0) > limits.maxFileBytes) {
    throw new ArtifactRefusedError(
      'ArtifactTooLarge',
      describe,
      `has a file ${JSON.stringify(path)} larger than ${describeArtifactLimit(limits, 'maxFileBytes')}`,
    );
  }
  return { kind, path };
}

/** What an entry's type makes it, or why it is not written: files and directories only. */
function entryKind(header: Header): EntryKind | { problem: string } {
  const to = JSON.stringify(header.linkname ?? '');
  const only = 'an artifact may hold only files and directories';
  switch (header.type) {
    case 'file':
    case 'contiguous-file':
      return 'file';
    case 'directory':
      return 'directory';
    case 'symlink':
      return { problem: `it is a symbolic link to ${to}; ${only}` };
    case 'link':
      return { problem: `it is a hard link to ${to}; ${only}` };
    case 'character-device':
      return { problem: `it is a character device; ${only}` };
    case 'block-device':
      return { problem: `it is a block device; ${only}` };
    case 'fifo':
      return { problem: `it is a FIFO; ${only}` };
    default:
      return { problem: `its entry type is unknown; ${only}` };
  }
}

/** Streams one file's content to a new file, in the chunks the archive gives: memory stays small. */
async function writeFileEntry(
  entry: Entry,
  destination: string,
  path: string,
  target: ExtractionTarget,
): Promise<number> {
  const mode = ((entry.header.mode ?? 0) & 0o111) === 0 ? 0o644 : 0o755;
  const handle = await open(destination, CREATE_FILE, mode);
  let written = 0;
  try {
    for await (const chunk of entry as AsyncIterable<Buffer>) {
      written += chunk.length;
      // The header's size was checked; tar-stream gives no more, but the bound does not rest on that.
      if (written > target.limits.maxFileBytes) {
        throw new ArtifactRefusedError(
          'ArtifactTooLarge',
          target.describe,
          `has a file ${JSON.stringify(path)} larger than ${describeArtifactLimit(target.limits, 'maxFileBytes')}`,
        );
      }
      for (let offset = 0; offset < chunk.length; ) {
        offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
      }
    }
  } finally {
    await handle.close();
  }
  return written;
}

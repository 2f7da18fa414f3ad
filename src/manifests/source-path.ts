/**
 * spec.source.path as the controller takes it, whatever the source type: relative to the source's root,
 * never leaving it.
 */
import { IntentError } from '../errors/intent-error.js';

/** @internal `path` in the source spec is absolute or leaves the repository with `..` (tests name the class). */
export class InvalidSourcePathError extends IntentError {
  override readonly name = 'InvalidSourcePathError';
  readonly code = 'INVALID_SOURCE_PATH';
  readonly reason = 'InvalidPath';
  readonly intent = 'stalled';
  constructor(
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid source path ${JSON.stringify(path)}: ${detail}`, options);
  }
}

/**
 * The path components of an ApplySet's `spec.source.path`, refusing anything that could leave the
 * repository: absolute paths, `..` segments (even ones that would come back inside, as Flux refuses them
 * too) and NUL bytes. Empty, `.` and `./` mean the root (no segments). Both separators split, so a path
 * written for Windows names the same directory.
 */
export function sourcePathSegments(sourcePath: string | undefined): string[] {
  const raw = sourcePath ?? '';
  if (raw.includes('\0')) throw new InvalidSourcePathError(raw, 'contains a NUL byte');
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw)) {
    throw new InvalidSourcePathError(raw, 'must be relative to the repository root');
  }
  const segments = raw.split(/[/\\]/);
  if (segments.includes('..')) throw new InvalidSourcePathError(raw, "must not contain '..'");
  return segments.filter((segment) => segment !== '' && segment !== '.');
}

/** The deepest directory holding every one of `directories` (slash-separated, from one root; '' the root). */
export function commonAncestor(directories: readonly string[]): string {
  let common: string[] | undefined;
  for (const directory of directories) {
    const parts = directory.split('/').filter((part) => part !== '' && part !== '.');
    if (common === undefined) {
      common = parts;
      continue;
    }
    let same = 0;
    while (same < common.length && same < parts.length && common[same] === parts[same]) same += 1;
    common = common.slice(0, same);
  }
  return (common ?? []).join('/');
}

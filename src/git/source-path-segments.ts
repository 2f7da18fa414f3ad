import { GitInvalidPathError } from './git-error.js';

/**
 * The path components of an ApplySet's `spec.source.path`, refusing anything that could leave the
 * repository: absolute paths, `..` segments (even ones that would come back inside, as Flux refuses them
 * too) and NUL bytes. Empty, `.` and `./` mean the root (no segments). Both separators split, so a path
 * written for Windows names the same directory.
 */
export function sourcePathSegments(sourcePath: string | undefined): string[] {
  const raw = sourcePath ?? '';
  if (raw.includes('\0')) throw new GitInvalidPathError(raw, 'contains a NUL byte');
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw)) {
    throw new GitInvalidPathError(raw, 'must be relative to the repository root');
  }
  const segments = raw.split(/[/\\]/);
  if (segments.includes('..')) throw new GitInvalidPathError(raw, "must not contain '..'");
  return segments.filter((segment) => segment !== '' && segment !== '.');
}

import path from 'node:path';
import { GitInvalidPathError } from './git-error.js';

/**
 * The directory `sourcePath` names inside a checkout at `root`, refusing anything that could leave it:
 * absolute paths, `..` segments (even ones that would come back inside, as Flux refuses them too) and
 * NUL bytes. Empty, `.` and `./` mean the root. Pure: no file system access, so a symlink inside the
 * checkout is the manifest reader's concern (it follows links only when they stay inside).
 */
export function resolveSourcePath(root: string, sourcePath: string | undefined): string {
  const raw = sourcePath ?? '';
  if (raw.includes('\0')) throw new GitInvalidPathError(raw, 'contains a NUL byte');
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw)) {
    throw new GitInvalidPathError(raw, 'must be relative to the repository root');
  }
  const segments = raw.split(/[/\\]/);
  if (segments.includes('..')) throw new GitInvalidPathError(raw, "must not contain '..'");
  const relative = segments.filter((segment) => segment !== '' && segment !== '.');
  return relative.length === 0 ? root : path.join(root, ...relative);
}

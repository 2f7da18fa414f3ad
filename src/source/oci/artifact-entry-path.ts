import { ARTIFACT_PATH_BOUNDS } from './artifact-limits.js';

/**
 * An entry's path inside the artifact, '/'-separated, without `./` or empty names (`''` for the root
 * itself, which `tar -czf layer.tgz -C dir .` lists as `./`); or why it may not be written.
 *
 * Refused: a NUL; a backslash (a separator on Windows, never in a manifest's name); an absolute path; a
 * Windows drive path (`C:…`); any `..` name, even one that would stay inside once normalised (`a/../b`):
 * no tool that packs a directory writes one, and refusing them all leaves no arithmetic to get wrong;
 * a path deeper or longer than ARTIFACT_PATH_BOUNDS.
 */
export function artifactEntryPath(name: string): { path: string } | { problem: string } {
  if (name.includes('\0')) return { problem: 'its path has a NUL byte' };
  if (name.includes('\\')) return { problem: 'its path has a backslash' };
  if (name.startsWith('/')) return { problem: 'its path is absolute' };
  if (isWindowsDrivePath(name)) return { problem: 'its path starts with a Windows drive' };
  const names = name.split('/').filter((part) => part !== '' && part !== '.');
  if (names.includes('..')) return { problem: 'its path has a ".." name' };
  if (names.length > ARTIFACT_PATH_BOUNDS.maxDepth) {
    return { problem: `its path is ${names.length} names deep, more than ${ARTIFACT_PATH_BOUNDS.maxDepth}` };
  }
  const path = names.join('/');
  if (Buffer.byteLength(path) > ARTIFACT_PATH_BOUNDS.maxPathBytes) {
    return { problem: `its path is longer than ${ARTIFACT_PATH_BOUNDS.maxPathBytes} bytes` };
  }
  if (names.some((part) => Buffer.byteLength(part) > ARTIFACT_PATH_BOUNDS.maxNameBytes)) {
    return { problem: `a name in its path is longer than ${ARTIFACT_PATH_BOUNDS.maxNameBytes} bytes` };
  }
  return { path };
}

/** `C:`, `c:/x`: a letter and a colon, which Windows reads as a drive. */
function isWindowsDrivePath(name: string): boolean {
  const letter = name.toUpperCase().charCodeAt(0);
  return letter >= 0x41 && letter <= 0x5a && name[1] === ':';
}

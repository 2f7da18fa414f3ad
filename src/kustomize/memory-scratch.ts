import { mkdtemp, statfs } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../errors/message-of.js';
import { KustomizeError } from './kustomize-error.js';

/**
 * Where a build whose files are decrypted is written when nothing else is said: on Linux a tmpfs in
 * every container. The chart mounts an emptyDir of medium Memory instead (--decryption-scratch-dir).
 */
export const DEFAULT_DECRYPTION_SCRATCH_DIR = '/dev/shm';

/** statfs(2) `f_type` of the file systems that keep their files in memory only (linux/magic.h). */
const MEMORY_FILE_SYSTEMS = new Set([0x01021994 /* tmpfs */, 0x858458f6 /* ramfs */]);

/**
 * A new private directory (0700) under `parent`, which must be a memory-backed file system (tmpfs,
 * ramfs): a build that reads decrypted sops files is written there, so their plaintext never reaches a
 * disk. There is no fallback to the temp directory: a `parent` on a disk, or missing, refuses the build
 * as an installation problem (KustomizeUnavailable, retried), naming the directory.
 */
export async function memoryScratchDir(parent: string): Promise<string> {
  let type: number;
  try {
    type = (await statfs(parent)).type;
  } catch (error) {
    throw new KustomizeError(
      'internal',
      `the scratch directory for decrypted sops files, ${parent}, cannot be used (${messageOf(error)}); mount a memory-backed emptyDir there (medium: Memory), or name one with --decryption-scratch-dir`,
      { cause: error },
    );
  }
  if (!MEMORY_FILE_SYSTEMS.has(type)) {
    throw new KustomizeError(
      'internal',
      `the scratch directory for decrypted sops files, ${parent}, is not memory-backed (file system type 0x${type.toString(16)}, not tmpfs); decrypted files are never written to a disk: mount an emptyDir with medium: Memory there, or name one with --decryption-scratch-dir`,
    );
  }
  return mkdtemp(path.join(parent, 'applyset-kustomize-'));
}

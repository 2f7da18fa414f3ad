import path from 'node:path';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { FileTransform } from '../manifests/file-transform.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { decryptSopsFile, isSopsFile } from '../sops/decrypt-sops-file.js';
import { DecryptionNotConfiguredError } from '../sops/decryption-not-configured-error.js';
import { CLI_IDENTITY_SOURCES } from './read-cli-age-identities.js';

const NO_IDENTITY = `no age identity to decrypt them with (${CLI_IDENTITY_SOURCES})`;

/**
 * The `-f` files with every sops file decrypted, before anything is sent: with no identities, any sops
 * file refuses the whole input (DecryptionNotConfiguredError naming every such file), since applied as
 * it is its ciphertext would become the live values, or the server would refuse that object only,
 * after the others were written. A file that does not decrypt throws SopsDecryptionError naming it.
 */
export async function decryptCliManifests(
  files: readonly ManifestFile[],
  identities: readonly string[],
): Promise<ManifestFile[]> {
  const encrypted = files.filter((file) => isSopsFile(file.path, Buffer.from(file.text)));
  if (encrypted.length === 0) return [...files];
  if (identities.length === 0) {
    throw new DecryptionNotConfiguredError(
      encrypted.map((file) => file.path),
      NO_IDENTITY,
    );
  }
  const decrypted: ManifestFile[] = [];
  for (const file of files) {
    const plain = encrypted.includes(file)
      ? await decryptSopsFile(file.path, Buffer.from(file.text), identities)
      : undefined;
    decrypted.push(
      plain === undefined ? file : { path: file.path, text: Buffer.from(plain).toString('utf8') },
    );
  }
  return decrypted;
}

/**
 * For `-k`: each file the build reads, decrypted when it is a sops file; with no identities such a
 * file refuses the build, naming it.
 */
function cliBuildTransform(identities: readonly string[]): FileTransform {
  return async (filePath, bytes) => {
    if (!isSopsFile(filePath, bytes)) return bytes;
    if (identities.length === 0) throw new DecryptionNotConfiguredError([filePath], NO_IDENTITY);
    return (await decryptSopsFile(filePath, bytes, identities)) ?? bytes;
  };
}

/**
 * How a build of the CLI runs (`-k`, `--oci` with a kustomization, `--helm-chart`): the kustomize
 * options of the flags with --decryption-scratch-dir resolved against the working directory, files
 * decrypted with the CLI's identities, in memory-backed scratch when there are any.
 */
export function cliBuild(
  flags: { readonly kustomizeOptions: KustomizeOptions; readonly decryptionScratchDir: string | undefined },
  identities: readonly string[],
  cwd: string,
): { options: KustomizeOptions; transform: FileTransform; inMemory: boolean } {
  const scratch = flags.decryptionScratchDir;
  return {
    options: {
      ...flags.kustomizeOptions,
      ...(scratch === undefined ? {} : { decryptionScratchDir: path.resolve(cwd, scratch) }),
    },
    transform: cliBuildTransform(identities),
    inMemory: identities.length > 0,
  };
}

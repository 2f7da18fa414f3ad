/**
 * Changes a file's bytes before a tool reads them (given its path from the repository root); a sops
 * decryption, for one. A build calls it only on the files it reads (src/kustomize/build-kustomization.ts).
 */
export type FileTransform = (filePath: string, bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>;

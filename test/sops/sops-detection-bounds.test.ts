import { decryptSopsFile, isSopsFile } from '../../src/sops/decrypt-sops-file.js';
import { SopsDecryptionError } from '../../src/sops/sops-decryption-error.js';
import { sopsLookingBomb } from '../manifests/yaml-bombs.js';

// Issue #33, finding 1: the sops detection parsed every file naming sops without the alias bound of
// the manifest reader, and expanded a 600-byte file into 10^7 nodes: the heap ran out.
describe('the sops detection reads through the parse door', () => {
  it("takes a file that only mentions sops, aliased past go-yaml's test, for no sops file, quickly", () => {
    const bytes = Buffer.from(sopsLookingBomb());
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    expect(isSopsFile('repo/bomb.yaml', bytes)).toBe(false);
    // The manifest reader then refuses it for its aliasing, naming the file.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a file with sops metadata and the same aliases as malformed, naming it', async () => {
    const text = `${sopsLookingBomb()}sops:\n  version: 3.9.0\n`;
    expect(isSopsFile('repo/bomb.yaml', Buffer.from(text))).toBe(true);
    const refused = decryptSopsFile('repo/bomb.yaml', Buffer.from(text), []);
    await expect(refused).rejects.toThrow(SopsDecryptionError);
    await expect(refused).rejects.toThrow(
      /^cannot decrypt sops file repo\/bomb\.yaml: contains excessive aliasing .*; nothing was applied$/,
    );
  });
});

/**
 * A kustomization whose files are sops-encrypted, built as the controller and the preview build it:
 * only the files the build reads are decrypted (a monorepo's other environments, encrypted to other
 * keys, are never opened), and only in memory-backed scratch: no plaintext is on a disk while
 * kustomize runs, nor after. The real sops (scripts/build-sops.sh) and kustomize.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FileTransform } from '../../src/manifests/file-transform.js';
import { buildCheckoutKustomization } from '../../src/kustomize/build-kustomization.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, type KustomizeOptions } from '../../src/kustomize/run-kustomize.js';
import { decryptSopsFile, isSopsFile } from '../../src/sops/decrypt-sops-file.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type AgeKey, type SopsTool } from '../harness/sops-tool.js';

const MARKER = 'ScratchPlainMarker4q7';
const secret = (name: string, password: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\nstringData:\n  password: ${password}\n`;

describe('a kustomization with sops files, built decrypted', () => {
  let sops: SopsTool;
  let envA: AgeKey;
  let envB: AgeKey;
  let binary: string;
  let checkout: string;
  let scratch: string;
  let opened: string[];

  /** The controller's transform, recording which sops files it opens. */
  const decryptWith =
    (identities: readonly string[]): FileTransform =>
    async (filePath, bytes) => {
      if (!isSopsFile(filePath, bytes)) return bytes;
      opened.push(filePath);
      return (await decryptSopsFile(filePath, bytes, identities)) ?? bytes;
    };

  beforeAll(async () => {
    [sops, binary] = await Promise.all([startSopsTool(), kustomizeBinary()]);
    [envA, envB] = await Promise.all([sops.ageKey(), sops.ageKey()]);
    checkout = await mkdtemp(path.join(os.tmpdir(), 'decrypted-build-test-'));
    const files: Record<string, string> = {
      'base/kustomization.yaml': 'resources: [settings.yaml]\n',
      'base/settings.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n',
      'envs/a/kustomization.yaml': 'resources: [../../base, db.yaml]\n',
      'envs/a/db.yaml': await sops.encrypt('db.yaml', secret('db', `${MARKER}A`), [envA.recipient]),
      'envs/b/kustomization.yaml': 'resources: [../../base, db.yaml]\n',
      'envs/b/db.yaml': await sops.encrypt('db.yaml', secret('db', `${MARKER}B`), [envB.recipient]),
      // Not named by any kustomization: never opened, whatever it is.
      'envs/a/unused.yaml': await sops.encrypt('unused.yaml', secret('unused', `${MARKER}U`), [
        envB.recipient,
      ]),
    };
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.join(checkout, path.dirname(name)), { recursive: true });
      await writeFile(path.join(checkout, name), text);
    }
  }, SOPS_TIMEOUT_MS + 30_000);

  beforeEach(async () => {
    opened = [];
    scratch = await mkdtemp(path.join('/dev/shm', 'decrypted-build-scratch-'));
  });

  afterEach(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  afterAll(async () => {
    if (checkout !== undefined) await rm(checkout, { recursive: true, force: true });
    await sops?.cleanup();
  });

  const options = (extra: Partial<KustomizeOptions> = {}): KustomizeOptions => ({
    ...DEFAULT_KUSTOMIZE_OPTIONS,
    binary,
    decryptionScratchDir: scratch,
    ...extra,
  });

  it("builds one environment of a monorepo with its key alone: another environment's file is never opened", async () => {
    const built = await buildCheckoutKustomization(checkout, {
      sourcePath: 'envs/a',
      options: options(),
      transform: decryptWith([envA.identity]),
      inMemory: true,
    });
    expect(built.text).toContain(`password: ${MARKER}A`);
    expect(built.text).toContain('name: settings');
    expect(opened).toEqual(['envs/a/db.yaml']);
  });

  it('writes the plaintext only to memory-backed scratch, removed after the build: never to a disk', async () => {
    // kustomize itself, behind a script that first lists every file holding the plaintext in the builds'
    // directories under the temp directory (on a disk here) and in the scratch directory, while the
    // build's files are there.
    const wrapperDir = await mkdtemp(path.join(os.tmpdir(), 'kustomize-watch-'));
    const report = path.join(wrapperDir, 'found');
    const wrapper = path.join(wrapperDir, 'kustomize');
    const grep = '/usr/bin/grep -rlF';
    await writeFile(
      wrapper,
      `#!/bin/sh\n${grep} '${MARKER}A' ${os.tmpdir()}/applyset-kustomize-* ${scratch} > ${report} 2>/dev/null\n` +
        `exec ${binary} "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    try {
      const built = await buildCheckoutKustomization(checkout, {
        sourcePath: 'envs/a',
        options: options({ binary: wrapper }),
        // Both keys: whichever files a build opens, each decrypts; what matters is where.
        transform: decryptWith([envA.identity, envB.identity]),
        inMemory: true,
      });
      expect(built.text).toContain(`password: ${MARKER}A`);
      const found = (await readFile(report, 'utf8')).split('\n').filter((line) => line !== '');
      // The scan saw the plaintext kustomize was about to read, and only in the scratch directory.
      expect(found.length).toBeGreaterThan(0);
      expect(found.filter((file) => !file.startsWith(`${scratch}/`))).toEqual([]);
      expect(await readdir(scratch)).toEqual([]);
    } finally {
      await rm(wrapperDir, { recursive: true, force: true });
    }
  });

  it('refuses, decrypting nothing, a scratch directory that is not memory-backed', async () => {
    const onDisk = await mkdtemp(path.join(os.tmpdir(), 'decrypted-build-disk-'));
    try {
      await expect(
        buildCheckoutKustomization(checkout, {
          sourcePath: 'envs/a',
          options: options({ decryptionScratchDir: onDisk }),
          transform: decryptWith([envA.identity]),
          inMemory: true,
        }),
      ).rejects.toThrow(`the scratch directory for decrypted sops files, ${onDisk}, is not memory-backed`);
      expect(opened).toEqual([]);
      expect(await readdir(onDisk)).toEqual([]);
    } finally {
      await rm(onDisk, { recursive: true, force: true });
    }
  });
});

/**
 * A preview's `--local` checkout built by kustomize with a transform (sops decryption, in the
 * preview): kustomize reads the transformed files from a private copy in memory-backed scratch, and
 * the checkout is left as it was. The real kustomize (scripts/build-kustomize.sh).
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildCheckoutKustomization } from '../../src/kustomize/build-kustomization.js';
import { copyCheckout } from '../../src/kustomize/copy-checkout.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { kustomizeBinary } from '../harness/kustomize-binary.js';

const configMap = (value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: ${value}\n`;
/** Stands for a decryption: a file holding SEALED is written out holding OPEN. */
const unseal = (_path: string, bytes: Uint8Array) =>
  Buffer.from(Buffer.from(bytes).toString('utf8').replace('SEALED', 'OPEN'));

describe('a checkout on disk, built through a transform', () => {
  let checkout: string;
  let into: string;

  beforeEach(async () => {
    checkout = await mkdtemp(path.join(os.tmpdir(), 'checkout-test-'));
    into = await mkdtemp(path.join(os.tmpdir(), 'checkout-copy-test-'));
    await mkdir(path.join(checkout, 'app'));
    await mkdir(path.join(checkout, '.git'));
    await writeFile(path.join(checkout, '.git', 'config'), '[core]\n');
    await writeFile(path.join(checkout, 'app', 'kustomization.yaml'), 'resources: [settings.yaml]\n');
    await writeFile(path.join(checkout, 'app', 'settings.yaml'), configMap('SEALED'));
    await symlink('settings.yaml', path.join(checkout, 'app', 'link.yaml'));
  });

  afterEach(async () => {
    await rm(checkout, { recursive: true, force: true });
    await rm(into, { recursive: true, force: true });
  });

  it('copies every file as it is, links as links, and leaves .git out', async () => {
    await copyCheckout(checkout, into, {});
    expect((await readdir(into)).sort()).toEqual(['app']);
    expect(await readFile(path.join(into, 'app', 'settings.yaml'), 'utf8')).toBe(configMap('SEALED'));
    expect((await lstat(path.join(into, 'app', 'link.yaml'))).isSymbolicLink()).toBe(true);
  });

  it('builds what kustomize makes of the transformed files, the checkout unchanged', async () => {
    const options = { ...DEFAULT_KUSTOMIZE_OPTIONS, binary: await kustomizeBinary() };
    const built = await buildCheckoutKustomization(checkout, {
      sourcePath: 'app',
      options,
      transform: unseal,
      inMemory: true,
    });
    expect(built.path).toBe('kustomize build app');
    expect(built.text).toContain('mode: OPEN');
    expect(await readFile(path.join(checkout, 'app', 'settings.yaml'), 'utf8')).toBe(configMap('SEALED'));
    // Without a transform the checkout is built in place, as `applyset apply -k` builds it.
    const inPlace = await buildCheckoutKustomization(checkout, { sourcePath: 'app', options });
    expect(inPlace.text).toContain('mode: SEALED');
  });
});

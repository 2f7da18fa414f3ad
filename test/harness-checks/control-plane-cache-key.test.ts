/**
 * The control-plane build cache is keyed by what is built, never by where the checkout lives: two clones
 * of one commit at different paths must share one build (a cold build takes minutes).
 */
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(repoRoot, 'scripts/build-control-plane.sh');

async function keyOf(moduleDir: string): Promise<string> {
  const { stdout } = await execFileAsync('bash', [script, '--print-key'], {
    env: { ...process.env, APPLYSET_CONTROLPLANE_MODULE: moduleDir },
  });
  return stdout.trim();
}

describe('control-plane cache key', () => {
  let work: string;

  beforeEach(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'applyset-cache-key-'));
  });

  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('is the same for two copies of the module at different paths', async () => {
    const first = path.join(work, 'one', 'controlplane');
    const second = path.join(work, 'a', 'much', 'longer', 'path', 'controlplane');
    await cp(path.join(repoRoot, 'controlplane'), first, { recursive: true });
    await cp(path.join(repoRoot, 'controlplane'), second, { recursive: true });

    const [a, b, own] = await Promise.all([
      keyOf(first),
      keyOf(second),
      keyOf(path.join(repoRoot, 'controlplane')),
    ]);
    expect(a).toMatch(/^v\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    expect(b).toBe(a);
    expect(own).toBe(a);
  });

  it('changes when the module’s dependencies change', async () => {
    const copy = path.join(work, 'controlplane');
    await cp(path.join(repoRoot, 'controlplane'), copy, { recursive: true });
    const before = await keyOf(copy);
    await appendFile(path.join(copy, 'go.sum'), 'example.com/extra v0.0.1 h1:AAAA=\n');
    expect(await keyOf(copy)).not.toBe(before);
  });
});

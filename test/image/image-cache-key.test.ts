/**
 * The image build's cache key (scripts/build-image.sh --print-key) is what goes into the image: two
 * clones of one commit at different paths share one build, a change to a file the Dockerfile copies
 * rebuilds, and a change to one it does not copy (a test, the README) does not.
 */
import { execFile } from 'node:child_process';
import { appendFile, cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BUILD_INPUTS = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  '.npmrc',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'bin',
  'scripts/build-image.sh',
  'scripts/build-helm.sh',
];

/** A copy of what the image is built from, plus a file it is not built from. */
async function cloneAt(dir: string): Promise<string> {
  await mkdir(path.join(dir, 'test'), { recursive: true });
  await Promise.all(
    BUILD_INPUTS.map((entry) => cp(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true })),
  );
  await cp(path.join(repoRoot, 'README.md'), path.join(dir, 'README.md'));
  return dir;
}

async function keyOf(clone: string): Promise<string> {
  const { stdout } = await execFileAsync('bash', [path.join(clone, 'scripts/build-image.sh'), '--print-key']);
  return stdout.trim();
}

describe('the image cache key', () => {
  let work: string;

  beforeEach(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'applyset-image-key-'));
  });

  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('is the same for two clones at different paths', async () => {
    const [first, second] = await Promise.all([
      cloneAt(path.join(work, 'one')),
      cloneAt(path.join(work, 'a', 'much', 'longer', 'path')),
    ]);
    const [a, b] = await Promise.all([keyOf(first), keyOf(second)]);
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(b).toBe(a);
  });

  it('changes with a source file the Dockerfile copies, not with a file it leaves out', async () => {
    const clone = await cloneAt(path.join(work, 'clone'));
    const before = await keyOf(clone);
    await appendFile(path.join(clone, 'README.md'), '\nA line the image never holds.\n');
    expect(await keyOf(clone)).toBe(before);
    await appendFile(path.join(clone, 'src/main.ts'), '\n// A line the image compiles.\n');
    expect(await keyOf(clone)).not.toBe(before);
  });
});

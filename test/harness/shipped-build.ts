/**
 * The build the image ships: `dist/`, compiled by `tsc -p tsconfig.build.json`, which `bin/applyset.js`
 * runs. The e2e controllers run it (controller-process.ts), so the integration run's global setup makes
 * sure it is the build of the sources as they are now: it is rebuilt whenever the content of its inputs
 * changed, never trusted by its timestamps, and left alone otherwise (a build takes seconds on two cores).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitFor } from '../e2e/wait-for.js';

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const distDir = path.join(repoRoot, 'dist');
/** The key of the sources dist/ was built from, written last, so a half-written build has none. */
const keyFile = path.join(distDir, '.build-key');
/** Held (mkdir is atomic) while one run builds, so two runs in one checkout never write dist/ at once. */
const lockDir = path.join(repoRoot, '.dist-build-lock');

/**
 * Whether the e2e controllers run dist/ through bin/applyset.js, as the image does. Always in CI;
 * elsewhere too unless APPLYSET_E2E_ENTRY=src asks for the sources through tsx, for a quicker loop
 * while editing them (no rebuild per edit).
 */
export function e2eRunsShippedBuild(): boolean {
  return process.env['CI'] === 'true' || process.env['APPLYSET_E2E_ENTRY'] !== 'src';
}

/** What a build depends on: every file under src/, both tsconfigs and the compiler's version. */
export async function shippedBuildKey(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(path.join(repoRoot, 'src'), { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)))
    .sort();
  for (const file of [
    ...files,
    'tsconfig.json',
    'tsconfig.build.json',
    'node_modules/typescript/package.json',
  ]) {
    hash.update(`${file}\0`);
    hash.update(await readFile(path.join(repoRoot, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

async function builtKey(): Promise<string | undefined> {
  return readFile(keyFile, 'utf8').catch(() => undefined);
}

/**
 * Builds dist/ from scratch unless it already holds the build of the current sources. Resolves with
 * whether it built. A build that fails throws with the compiler's output.
 * @public global-setup.js loads it through tsx's tsImport, which the dead-export check cannot follow.
 */
export async function ensureShippedBuild(): Promise<boolean> {
  const key = await shippedBuildKey();
  if ((await builtKey()) === key) return false;
  await takeLock();
  try {
    // Another run may have built it while this one waited for the lock.
    if ((await builtKey()) === key) return false;
    // From scratch: tsc never removes the output of a source that was deleted or renamed.
    await rm(distDir, { recursive: true, force: true });
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    try {
      await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: repoRoot });
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? '';
      throw new Error(`building dist/ failed:\n${output}`, { cause: error });
    }
    await writeFile(keyFile, key);
    return true;
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function takeLock(): Promise<void> {
  await waitFor(
    'the lock on building dist/',
    async () => {
      try {
        await mkdir(lockDir);
        await writeFile(path.join(lockDir, 'pid'), String(process.pid));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        await dropIfOwnerGone();
        return undefined;
      }
    },
    300_000,
  );
}

/** A lock whose process died (a run killed mid-build) would otherwise hold every later run up. */
async function dropIfOwnerGone(): Promise<void> {
  const pid = Number(await readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 0);
  } catch {
    await rm(lockDir, { recursive: true, force: true });
  }
}

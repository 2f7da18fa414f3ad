// Every file a test run writes to the temp dir goes under one directory of its own: the global setup points
// TMPDIR there (test workers and the processes they start inherit it, and os.tmpdir() reads it), and the
// global teardown fails the run if anything is left in it, then removes it, so `npm test` leaves nothing
// behind even when a test leaks.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function enterRunTempDir() {
  if (globalThis.applysetRunTempDir !== undefined) return;
  // Kept for what must outlive the run, such as the browser tests' screenshots (test/ui/browser.ts).
  process.env.APPLYSET_OUTER_TMPDIR ??= tmpdir();
  const dir = await mkdtemp(join(tmpdir(), 'applyset-test-run-'));
  globalThis.applysetRunTempDir = dir;
  process.env.TMPDIR = dir;
}

/** Throws when the run left files behind; removes the directory either way. */
export async function leaveRunTempDir() {
  const dir = globalThis.applysetRunTempDir;
  if (dir === undefined) return;
  globalThis.applysetRunTempDir = undefined;
  let leftovers;
  try {
    // tsx (which runs the TypeScript sources of every process a test starts with `--import tsx`)
    // keeps its compile cache in the temp dir as tsx-<uid>: tsx's, not a test's leftover. cli-home is
    // the HOME of the commands tests run (cli-home.ts), where they keep their OpenAPI cache as they
    // would in a user's home. Both go with the directory like everything else.
    leftovers = (await readdir(dir)).filter((name) => !/^tsx-\d+$/.test(name) && name !== 'cli-home');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (leftovers.length > 0) {
    throw new Error(
      `the test run left ${leftovers.length} entries in the temp dir: ${leftovers.sort().join(', ')}`,
    );
  }
}

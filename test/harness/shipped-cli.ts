/**
 * `applyset` as users run it: the shipped bin/applyset.js (the compiled CLI, built by the tests' global
 * setup) in a process of its own, so what only a process start reads (NODE_EXTRA_CA_CERTS) applies.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const applysetBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/applyset.js');

export interface ShippedCliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `applyset ARGS` with `env` (whole: nothing of the test's own is inherited but what it passes). */
export async function runShippedCli(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<ShippedCliRun> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [applysetBin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    // A code that is not a number is a failure to start (ENOENT…): no exit code the test could expect.
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

// What the e2e suites about hostile input check of the controller's own process: still running, and
// how much memory it ever held.
import { readFile } from 'node:fs/promises';
import type { ControllerProcess } from './controller-process.js';

export const MIB = 1024 * 1024;

/** Peak resident memory of a process so far (VmHWM), from /proc. */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (match?.[1] === undefined) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Fails the wait at once, with the reason, when the controller is gone. */
export function assertAlive(controller: ControllerProcess): void {
  const { exitCode, signalCode } = controller.child;
  if (exitCode !== null || signalCode !== null) {
    throw new Error(`the controller exited (${exitCode ?? signalCode})`);
  }
}

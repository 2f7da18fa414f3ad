import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ControlPlaneError } from './control-plane-error.js';

// The processes of the local control plane (and of the node profile): started with their output in a
// log file, watched for readiness, stopped in reverse order.

export function startProcess(
  binary: string,
  args: readonly string[],
  logPath: string,
  ownerPid: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  // The log file descriptor goes straight to the child, so its output never depends on our process
  // staying alive (a pipe would break when `cluster:up` exits).
  const out = openSync(logPath, 'a');
  // Without an owner the process is detached so that it outlives `cluster:up`. With one, a small bash
  // watchdog ends it when the owner dies, whatever the owner's death (SIGKILL included).
  const child =
    ownerPid === undefined
      ? spawn(binary, args, { detached: true, stdio: ['ignore', out, out], env })
      : spawn(
          'bash',
          [
            '-c',
            'child=""; trap \'[ -n "$child" ] && kill $child 2>/dev/null; wait\' EXIT TERM INT; ' +
              '"$@" & child=$!; ' +
              `while kill -0 ${ownerPid} 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1; done`,
            'watchdog',
            binary,
            ...args,
          ],
          { stdio: ['ignore', out, out], env },
        );
  closeSync(out);
  if (ownerPid === undefined) child.unref();
  return child;
}

export async function waitForProcess(
  what: string,
  check: () => Promise<boolean>,
  deadlineMs: number,
  exited: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let delay = 50;
  for (;;) {
    const exitReason = exited();
    if (exitReason !== undefined)
      throw new ControlPlaneError(`${what}: process exited early (${exitReason})`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new ControlPlaneError(`${what}: not ready after ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 500);
  }
}

export async function tail(path: string): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').slice(-25).join('\n');
}

export async function stopProcesses(children: readonly ChildProcess[]): Promise<void> {
  // Reverse start order: the controller manager and apiserver go before etcd, as a real node would.
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops one process startProcess started, `binary` itself rather than only its watchdog (which would
 * wait for it: kube-apiserver drains its watches for a long while): SIGTERM, then SIGKILL after
 * `graceMs`. Resolves once the program and its watchdog have both exited.
 */
export async function stopProgram(child: ChildProcess, binary: string, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Under a watchdog, the program is the watchdog's child of that name; detached, the child itself.
  const found = spawnSync('pgrep', ['-P', String(child.pid), '-x', basename(binary).slice(0, 15)]);
  const pid = Number(found.stdout.toString().trim().split('\n')[0]) || child.pid;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  // The watchdog sees its program gone within its one-second poll, and exits.
  await exited;
}

import { type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apiGet } from './api-get.js';
import { ControlPlaneError } from './control-plane-error.js';
import type { ControlPlaneInfo } from './control-plane.js';
import { isAlive, startProcess, stopProcesses, waitForProcess } from './start-process.js';

// Restarts the kube-apiserver of a running local control plane alone, etcd and the controller manager
// left running: the process is found among the control plane's (or as the child of its watchdog, see
// startProcess), stopped with SIGTERM, and started again with the same command line, so on the same
// port, certificates and etcd. control-plane.ts is not changed: its stop() skips the process that
// exited, and the one started here is stopped by the returned handle's stop() (or by its watchdog,
// when the owner dies).

/** The kube-apiserver started again: stop it before the control plane's stop(). */
export interface RestartedApiServer {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

async function commandLine(pid: number): Promise<string[]> {
  const text = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const argv = text.split('\0');
  if (argv.at(-1) === '') argv.pop();
  return argv;
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  const children: number[] = [];
  for (const task of tasks) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    children.push(
      ...text
        .split(' ')
        .filter((word) => word !== '')
        .map(Number),
    );
  }
  return children;
}

/** The pid and command line of the running kube-apiserver among `pids` and their children. */
async function findApiServer(pids: readonly number[]): Promise<{ pid: number; argv: string[] }> {
  for (const pid of pids) {
    for (const candidate of [pid, ...(await childrenOf(pid))]) {
      const argv = await commandLine(candidate);
      if (argv[0]?.endsWith('/kube-apiserver') === true) return { pid: candidate, argv };
    }
  }
  throw new ControlPlaneError('restartApiServer: no running kube-apiserver among the control plane');
}

/**
 * Stops the control plane's kube-apiserver (or the one a previous restart started), starts it again
 * with the same arguments and waits until /readyz answers 200. `ownerPid` as in startControlPlane.
 */
export async function restartApiServer(
  controlPlane: ControlPlaneInfo,
  options: {
    readonly ownerPid?: number;
    readonly previous?: RestartedApiServer;
    readonly readyTimeoutMs?: number;
  } = {},
): Promise<RestartedApiServer> {
  const pids = [
    ...(options.previous?.child.pid === undefined ? [] : [options.previous.child.pid]),
    ...controlPlane.pids,
  ];
  const { pid, argv } = await findApiServer(pids);
  const [binary = '', ...args] = argv;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && (await commandLine(pid)).length > 0) {
    if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 100));
  }
  const child = startProcess(
    binary,
    args,
    join(controlPlane.workDir, 'kube-apiserver.log'),
    options.ownerPid,
  );
  let exit: string | undefined;
  child.once('exit', (code, signal) => (exit = `kube-apiserver exit code ${code ?? signal}`));
  await waitForProcess(
    'kube-apiserver (restarted)',
    async () =>
      (await apiGet(controlPlane.server, '/readyz', controlPlane.caPath, controlPlane.adminToken)).status ===
      200,
    options.readyTimeoutMs ?? 90_000,
    () => exit,
  );
  return { child, stop: () => stopProcesses([child]) };
}

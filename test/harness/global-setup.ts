import { startControlPlane, type ControlPlane } from './control-plane.js';

declare global {
  var applysetControlPlane: ControlPlane | undefined;
}

/**
 * Starts one real control plane for the whole integration run, unless APPLYSET_TEST_KUBECONFIG points at
 * one already running (for example from `npm run cluster:up`). Test workers inherit the env it sets.
 * A failure here fails the run loudly: integration tests never skip.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.APPLYSET_TEST_KUBECONFIG !== undefined && process.env.APPLYSET_TEST_KUBECONFIG !== '') return;
  const started = Date.now();
  const controlPlane = await startControlPlane({
    ownerPid: process.pid,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  globalThis.applysetControlPlane = controlPlane;
  // If jest is interrupted, stop what we started; the watchdog covers a SIGKILL.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void controlPlane.stop().finally(() => process.exit(130));
    });
  }
  process.env.APPLYSET_TEST_KUBECONFIG = controlPlane.kubeconfigPath;
  process.stderr.write(`control plane ready in ${Date.now() - started} ms at ${controlPlane.server}\n`);
}

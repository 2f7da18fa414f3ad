// Jest loads global setup outside its own transform pipeline, so this file is plain ESM and loads the
// TypeScript harness through tsx.
import { tsImport } from 'tsx/esm/api';
import { enterRunTempDir } from './run-temp-dir.js';

/**
 * Starts one real control plane for the whole integration run, unless APPLYSET_TEST_KUBECONFIG points at
 * one already running (for example from `npm run cluster:up`). Test workers inherit the env it sets.
 * A failure here fails the run loudly: integration tests never skip.
 */
export default async function globalSetup() {
  const reuse = Boolean(process.env.APPLYSET_TEST_KUBECONFIG);
  // tsx keeps its compile cache in the temp dir: load the harness before TMPDIR points at the run's
  // own directory, so the cache is tsx's (reused across runs), not a leftover of this run.
  const harness = reuse ? undefined : await tsImport('./control-plane.ts', import.meta.url);
  const { e2eRunsShippedBuild, ensureShippedBuild } = await tsImport('./shipped-build.ts', import.meta.url);
  // The e2e controllers run dist/: never a stale one (shipped-build.ts).
  if (e2eRunsShippedBuild()) {
    const started = Date.now();
    if (await ensureShippedBuild()) process.stderr.write(`dist/ built in ${Date.now() - started} ms\n`);
  }
  await enterRunTempDir();
  if (harness === undefined) return;
  const { startControlPlane } = harness;
  const started = Date.now();
  const controlPlane = await startControlPlane({
    ownerPid: process.pid,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  globalThis.applysetControlPlane = controlPlane;
  // If jest is interrupted, stop what we started; the watchdog covers a SIGKILL.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      void controlPlane.stop().finally(() => process.exit(130));
    });
  }
  process.env.APPLYSET_TEST_KUBECONFIG = controlPlane.kubeconfigPath;
  process.stderr.write(`control plane ready in ${Date.now() - started} ms at ${controlPlane.server}\n`);
}

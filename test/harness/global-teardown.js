import { leaveRunTempDir } from './run-temp-dir.js';

export default async function globalTeardown() {
  const controlPlane = globalThis.applysetControlPlane;
  globalThis.applysetControlPlane = undefined;
  await controlPlane?.stop();
  // Last, once the control plane's own working directory is gone.
  await leaveRunTempDir();
}

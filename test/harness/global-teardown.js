export default async function globalTeardown() {
  const controlPlane = globalThis.applysetControlPlane;
  globalThis.applysetControlPlane = undefined;
  await controlPlane?.stop();
}

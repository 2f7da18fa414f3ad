export default async function globalTeardown(): Promise<void> {
  const controlPlane = globalThis.applysetControlPlane;
  globalThis.applysetControlPlane = undefined;
  await controlPlane?.stop();
}

// Creating an ApplySet with spec fields ApplySetOptions has no option for (dependsOn, adopt, prune
// DryRun, drift modes…): the kit's body with those fields laid over its spec, so a suite states only
// what it tests.

import { applySetBody, GROUP, PLURAL, VERSION, type ApplySetOptions, type Cluster } from './e2e-kit.js';

export async function createApplySetWithSpec(
  c: Cluster,
  namespace: string,
  name: string,
  options: ApplySetOptions,
  spec: object,
): Promise<void> {
  const body = applySetBody(namespace, name, options);
  await c.custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    body: { ...body, spec: { ...(body['spec'] as object), ...spec } },
  });
}

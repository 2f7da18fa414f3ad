// A file of its own, though small and with one importer in src/: the engine's tests and the apply
// bench create their parents with it too, so a set in a test is parented as `applyset apply` parents it.
import type { ApplySetParent } from './apply-set-contract.js';

/** The `applyset apply` command's parent: a ConfigMap, created on the first apply. */
export function configMapParent(namespace: string, name: string): ApplySetParent {
  return {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    namespace,
    name,
    createIfMissing: true,
  };
}

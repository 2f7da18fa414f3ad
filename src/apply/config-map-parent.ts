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

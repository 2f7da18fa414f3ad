import type { WriteOptions } from '../kube/kube-object-api.js';
import type { WritePolicy } from './apply-set-contract.js';

/** kubectl's defaults: its own field manager name, and unknown or duplicate fields refused. */
const DEFAULT_FIELD_MANAGER = 'kubectl-client-side-apply';

export function writeOptions(policy: WritePolicy, warnings: string[]): WriteOptions {
  const validation = policy.fieldValidation ?? 'strict';
  return {
    fieldManager: policy.fieldManager ?? DEFAULT_FIELD_MANAGER,
    fieldValidation: validation === 'strict' ? 'Strict' : validation === 'warn' ? 'Warn' : 'Ignore',
    onWarning: (warning) => warnings.push(warning),
  };
}

export function warned(warnings: readonly string[]): { warnings?: readonly string[] } {
  return warnings.length === 0 ? {} : { warnings: [...warnings] };
}

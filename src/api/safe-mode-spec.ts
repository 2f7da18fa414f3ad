import { parseJsonPointer, type DriftIgnoreRule } from '../plan/drift-ignore.js';
import { isRecord, type SpecFail } from './spec-fields.js';

/*
 * The spec fields of the safe modes, read as the CRD declares them: spec.prune (true, false or
 * DryRun), spec.driftMode and spec.driftIgnore. Pure, like resolveApplySetSpec which calls it.
 */

/** @internal The CRD test holds crds/ to it. */
export const DRIFT_MODES = ['Correct', 'Warn'] as const;
export type DriftMode = (typeof DRIFT_MODES)[number];
export const PRUNE_DRY_RUN = 'DryRun';

/** `spec.prune`: `DryRun` judges what would be pruned and deletes nothing. */
export function resolvePrune(
  raw: unknown,
  fail: SpecFail,
): { readonly prune: boolean; readonly pruneDryRun: boolean } | undefined {
  if (typeof raw === 'boolean') return { prune: raw, pruneDryRun: false };
  if (raw === PRUNE_DRY_RUN) return { prune: true, pruneDryRun: true };
  return fail('spec.prune', `is required and must be true, false or "${PRUNE_DRY_RUN}"`);
}

const TARGET_KEYS = ['group', 'kind', 'name', 'namespace'] as const;

/** `spec.driftMode` (default Correct) and `spec.driftIgnore`, every problem reported. */
export function resolveDrift(
  spec: Readonly<Record<string, unknown>>,
  fail: SpecFail,
): { readonly driftMode: DriftMode; readonly driftIgnore: readonly DriftIgnoreRule[] } {
  const rawMode = spec['driftMode'];
  let driftMode: DriftMode = 'Correct';
  if (rawMode !== undefined) {
    if ((DRIFT_MODES as readonly unknown[]).includes(rawMode)) driftMode = rawMode as DriftMode;
    else fail('spec.driftMode', `must be one of ${DRIFT_MODES.join(', ')}`);
  }
  const rawRules = spec['driftIgnore'];
  const driftIgnore: DriftIgnoreRule[] = [];
  if (rawRules !== undefined && !Array.isArray(rawRules)) fail('spec.driftIgnore', 'must be a list');
  else
    (rawRules ?? []).forEach((entry: unknown, index) => {
      const rule = resolveRule(entry, `spec.driftIgnore[${index}]`, fail);
      if (rule !== undefined) driftIgnore.push(rule);
    });
  return { driftMode, driftIgnore };
}

function resolveRule(entry: unknown, field: string, fail: SpecFail): DriftIgnoreRule | undefined {
  if (!isRecord(entry)) return fail(field, 'must be an object');
  const paths = entry['paths'];
  if (!Array.isArray(paths) || paths.length === 0) return fail(`${field}.paths`, 'must be a non-empty list');
  let valid = true;
  paths.forEach((path: unknown, index) => {
    const tokens = typeof path === 'string' ? parseJsonPointer(path) : undefined;
    if (tokens === undefined || tokens.length === 0) {
      valid = false;
      fail(`${field}.paths[${index}]`, 'must be a JSON pointer to a field, such as /spec/replicas');
    }
  });
  const rawTarget = entry['target'] ?? {};
  if (!isRecord(rawTarget)) return fail(`${field}.target`, 'must be an object');
  const target: Record<string, string> = {};
  for (const key of TARGET_KEYS) {
    const value = rawTarget[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') {
      valid = false;
      fail(`${field}.target.${key}`, 'must be a string');
    } else target[key] = value;
  }
  return valid ? { paths: paths as string[], target } : undefined;
}

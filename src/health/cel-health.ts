/**
 * Health by CEL expressions, in the shape of Flux's spec.healthCheckExprs (kustomize-controller), so
 * a user copies theirs over: per apiVersion and kind, a `failed`, a `current` and an `inProgress`
 * expression over the object. As Flux: failed is evaluated first, then current, then inProgress; none
 * true leaves the object InProgress. An expression that cannot be evaluated on an object (a field it
 * lacks, a result that is not a bool) makes that object Unknown, naming the error: the set waits for
 * it, as for any object not Current, and nothing else is judged failed for it.
 */
import { computeObjectHealth, lifecycleHealth, type ObjectHealth } from './compute-object-health.js';
import { compileCelPredicate, type CelPredicate } from './cel-expression.js';
import type { JsonObject } from '../manifests/json-value.js';

/** One entry of spec.healthCheckExprs (and of the chart's health.checkExprs). */
export interface HealthCheckExpr {
  readonly apiVersion: string;
  readonly kind: string;
  readonly current: string;
  readonly inProgress?: string;
  readonly failed?: string;
}

/** The expression fields in the order they are evaluated. */
export const HEALTH_EXPR_FIELDS = ['failed', 'current', 'inProgress'] as const;
type ExprField = (typeof HEALTH_EXPR_FIELDS)[number];

/** How the health of a live object (undefined: it does not exist) is judged. */
export type ObjectHealthJudge = (object: JsonObject | undefined) => ObjectHealth;

interface CompiledCheck {
  readonly key: string;
  readonly predicates: readonly { readonly field: ExprField; readonly predicate: CelPredicate }[];
}

/** Each problem of an expression that does not compile, by field; none: all of them compile. */
export function healthCheckExprProblems(
  check: HealthCheckExpr,
): readonly { readonly field: ExprField; readonly message: string }[] {
  return HEALTH_EXPR_FIELDS.flatMap((field) => {
    const text = check[field];
    if (text === undefined) return [];
    const compiled = compileCelPredicate(text);
    return 'error' in compiled ? [{ field, message: compiled.error }] : [];
  });
}

/**
 * The checks of the cluster's default (the chart's health.checkExprs) and the ApplySet's own: the
 * ApplySet's entry for an apiVersion and kind replaces the default's for it.
 */
export function mergeHealthCheckExprs(
  defaults: readonly HealthCheckExpr[],
  own: readonly HealthCheckExpr[],
): HealthCheckExpr[] {
  const owned = new Set(own.map(keyOf));
  return [...defaults.filter((check) => !owned.has(keyOf(check))), ...own];
}

/**
 * The judge: an object of a kind with a check by its expressions, any other by kstatus's rules
 * (computeObjectHealth). Expressions that do not compile are left out (they were refused when read).
 */
export function healthJudge(checks: readonly HealthCheckExpr[]): ObjectHealthJudge {
  const compiled = new Map<string, CompiledCheck>();
  for (const check of checks) {
    const predicates = HEALTH_EXPR_FIELDS.flatMap((field) => {
      const text = check[field];
      const predicate = text === undefined ? undefined : compileCelPredicate(text);
      return predicate === undefined || 'error' in predicate ? [] : [{ field, predicate }];
    });
    compiled.set(keyOf(check), { key: keyOf(check), predicates });
  }
  return (object) => {
    if (object === undefined) return computeObjectHealth(object);
    const check = compiled.get(`${String(object['apiVersion'])}/${String(object['kind'])}`);
    return check === undefined ? computeObjectHealth(object) : celHealth(check, object);
  };
}

function celHealth(check: CompiledCheck, object: JsonObject): ObjectHealth {
  // What holds for every kind comes first, as for kstatus's generic rules: a deletion under way, and a
  // status that has not seen the latest spec says nothing about it yet.
  const early = lifecycleHealth(object);
  if (early !== undefined) return early;
  for (const { field, predicate } of check.predicates) {
    const verdict = predicate.test(object);
    if (verdict.kind === 'error')
      return {
        status: 'Unknown',
        message: `${field} expression ${predicate.text} failed: ${verdict.message}`,
      };
    if (!verdict.value) continue;
    const status = field === 'failed' ? 'Failed' : field === 'current' ? 'Current' : 'InProgress';
    return { status, message: `${field} expression is true: ${predicate.text}` };
  }
  const current = check.predicates.find((p) => p.field === 'current');
  return {
    status: 'InProgress',
    message: `current expression is false: ${current?.predicate.text ?? '(none)'}`,
  };
}

function keyOf(check: Pick<HealthCheckExpr, 'apiVersion' | 'kind'>): string {
  return `${check.apiVersion}/${check.kind}`;
}

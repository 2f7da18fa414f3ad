/**
 * `spec.healthCheckExprs` (and the controller's `--health-check-exprs` default) read and checked: each
 * expression must parse as CEL within the bounds of src/health/cel-expression.ts, so a wrong one is
 * refused when the ApplySet is read, naming the entry's kind, the field and the parser's message,
 * never found in the middle of a wait.
 */
import { HEALTH_EXPR_FIELDS, healthCheckExprProblems, type HealthCheckExpr } from '../health/cel-health.js';
import { isRecord, readString, type SpecFail } from './spec-fields.js';

/** `field` is where the list is (`spec.healthCheckExprs`); every problem is reported through `fail`. */
export function resolveHealthCheckExprs(raw: unknown, field: string, fail: SpecFail): HealthCheckExpr[] {
  const checks: HealthCheckExpr[] = [];
  if (raw === undefined) return checks;
  if (!Array.isArray(raw)) {
    fail(field, 'must be a list');
    return checks;
  }
  const seen = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const at = `${field}[${index}]`;
    const check = resolveEntry(entry, at, fail);
    if (check === undefined) return;
    const key = `${check.apiVersion} ${check.kind}`;
    if (seen.has(key)) {
      fail(at, `repeats apiVersion ${check.apiVersion} kind ${check.kind}: give one entry a kind`);
      return;
    }
    seen.add(key);
    checks.push(check);
  });
  return checks;
}

function resolveEntry(entry: unknown, at: string, fail: SpecFail): HealthCheckExpr | undefined {
  if (!isRecord(entry)) return fail(at, 'must be an object');
  const apiVersion = readString(entry, 'apiVersion', `${at}.apiVersion`, fail, { required: true });
  const kind = readString(entry, 'kind', `${at}.kind`, fail, { required: true });
  const texts = Object.fromEntries(
    HEALTH_EXPR_FIELDS.map((name) => [
      name,
      readString(entry, name, `${at}.${name}`, fail, { required: name === 'current' }),
    ]),
  );
  const current = texts['current'];
  if (apiVersion === undefined || kind === undefined || current === undefined) return undefined;
  const check: HealthCheckExpr = {
    apiVersion,
    kind,
    current,
    ...(texts['inProgress'] === undefined ? {} : { inProgress: texts['inProgress'] }),
    ...(texts['failed'] === undefined ? {} : { failed: texts['failed'] }),
  };
  const problems = healthCheckExprProblems(check);
  for (const problem of problems)
    fail(`${at}.${problem.field}`, `(${apiVersion} ${kind}) ${problem.message}`);
  return problems.length === 0 ? check : undefined;
}

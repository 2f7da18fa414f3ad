/**
 * `--health-check-exprs`: the cluster's default CEL health checks (the chart's health.checkExprs), a
 * JSON list in the shape of spec.healthCheckExprs. Checked at start by the same reader as the spec, so
 * a wrong default stops the controller, naming the entry, its kind and the parser's message.
 */
import { resolveHealthCheckExprs } from '../api/resolve-health-check-exprs.js';
import type { HealthCheckExpr } from '../health/cel-health.js';
import { InputParseError } from '../input/input-bounds.js';
import { readJsonValue } from '../input/read-json-value.js';
import { UsageError } from './parse-command-line.js';

export const HEALTH_CHECK_EXPRS_OPTIONS = { 'health-check-exprs': { type: 'string' } } as const;

export function healthCheckExprsConfig(values: { readonly 'health-check-exprs'?: string | undefined }): {
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
} {
  const text = values['health-check-exprs'];
  if (text === undefined || text.trim() === '') return {};
  let raw: unknown;
  try {
    raw = readJsonValue(text, '--health-check-exprs', 'health-check-exprs');
  } catch (error) {
    if (!(error instanceof InputParseError)) throw error;
    throw new UsageError(`${error.message}: give a JSON list of health checks`);
  }
  const problems: string[] = [];
  const checks = resolveHealthCheckExprs(raw, '--health-check-exprs', (field, message) => {
    problems.push(`${field} ${message}`);
    return undefined;
  });
  if (problems.length > 0)
    throw new UsageError(
      `the default health checks (the chart's health.checkExprs) are wrong: ${problems.join('; ')}`,
    );
  return { healthCheckExprs: checks };
}

/**
 * One CEL expression over one Kubernetes object, evaluated by @bufbuild/cel (a CEL interpreter, no
 * `eval`). The variables are the object's top-level fields, as Flux's kustomize-controller binds them
 * for spec.healthCheckExprs: `status`, `metadata`, `spec`, `apiVersion`, `kind`.
 *
 * Bounds. The library has no cost budget and no interrupt (cel-go's CostLimit has no counterpart in
 * @bufbuild/cel 0.6.1), and it runs synchronously on the controller's thread, so the work of one
 * evaluation is bounded by its inputs instead: an expression of at most MAX_EXPRESSION_LENGTH
 * characters, over an object of at most MAX_OBJECT_BYTES of JSON, with at most
 * MAX_COMPREHENSION_DEPTH comprehensions (`all`, `exists`, `filter`, `map`) nested in one another, so
 * an expression walks the object's lists at most that many times deep.
 */
import { celEnv, isCelError, isCelList, isCelMap, parse, plan, type CelResult } from '@bufbuild/cel';
import type { JsonObject } from '../manifests/json-value.js';

/**
 * Longer expressions are refused when they are read; Flux's documented examples are well under 500.
 * @internal The evaluator's test holds the bounds to it.
 */
export const MAX_EXPRESSION_LENGTH = 2048;
/**
 * An object larger than this (its JSON) is not evaluated: its health is Unknown. etcd stores 1.5 MiB at most.
 * @internal The evaluator's test holds the bounds to it.
 */
export const MAX_OBJECT_BYTES = 1024 * 1024;
/**
 * `a.all(x, b.all(y, ...))` is two deep; a third comprehension inside those is refused.
 * @internal The evaluator's test holds the bounds to it.
 */
export const MAX_COMPREHENSION_DEPTH = 2;

/** What an expression made of an object: true or false, or why it could not say. */
type CelVerdict =
  | { readonly kind: 'value'; readonly value: boolean }
  | { readonly kind: 'error'; readonly message: string };

/** A parsed expression, ready to judge objects. */
export interface CelPredicate {
  readonly text: string;
  readonly test: (object: JsonObject) => CelVerdict;
}

const env = celEnv();

/** The predicate, or why the text is refused: too long, too deep, or the parser's message. */
export function compileCelPredicate(text: string): CelPredicate | { readonly error: string } {
  if (text.trim() === '') return { error: 'is empty' };
  if (text.length > MAX_EXPRESSION_LENGTH)
    return { error: `is ${text.length} characters long, more than the ${MAX_EXPRESSION_LENGTH} allowed` };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(text);
  } catch (error) {
    return { error: `is not valid CEL: ${error instanceof Error ? error.message : String(error)}` };
  }
  const depth = comprehensionDepth(parsed.expr);
  if (depth > MAX_COMPREHENSION_DEPTH)
    return {
      error: `nests ${depth} comprehensions (all, exists, filter, map) in one another, more than the ${MAX_COMPREHENSION_DEPTH} allowed`,
    };
  const program = plan(env, parsed);
  return { text, test: (object) => evaluate(program, object) };
}

function evaluate(program: ReturnType<typeof plan>, object: JsonObject): CelVerdict {
  const bytes = Buffer.byteLength(JSON.stringify(object));
  if (bytes > MAX_OBJECT_BYTES)
    return {
      kind: 'error',
      message: `the object is ${bytes} bytes of JSON, more than the ${MAX_OBJECT_BYTES} evaluated`,
    };
  let result: CelResult;
  try {
    result = program(object);
  } catch (error) {
    // The library returns its errors; a throw is a defect of the library, still one object's problem.
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  if (isCelError(result)) return { kind: 'error', message: describeCelError(result.message, object) };
  if (typeof result !== 'boolean')
    return { kind: 'error', message: `must evaluate to a bool, got ${typeName(result)}` };
  return { kind: 'value', value: result };
}

/** The library says `unresolved attribute` of a variable the object lacks: say which fields it has. */
function describeCelError(message: string, object: JsonObject): string {
  if (message !== 'unresolved attribute') return message;
  return `${message} (the object's top-level fields are ${Object.keys(object).join(', ')})`;
}

function typeName(value: Exclude<CelResult, Error | boolean>): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'string')
    return `${typeof value === 'bigint' ? 'int' : typeof value === 'number' ? 'double' : 'string'} ${String(value)}`;
  if (isCelList(value)) return 'a list';
  if (isCelMap(value)) return 'a map';
  return 'a value of another type';
}

/** The deepest nesting of comprehensions in the parsed expression (the macros expand to them). */
function comprehensionDepth(expr: unknown): number {
  if (typeof expr !== 'object' || expr === null) return 0;
  if (Array.isArray(expr)) return Math.max(0, ...expr.map(comprehensionDepth));
  const record = expr as Record<string, unknown>;
  const kind = record['exprKind'];
  const own =
    typeof kind === 'object' && kind !== null && (kind as { case?: unknown }).case === 'comprehensionExpr'
      ? 1
      : 0;
  const children = Object.entries(record)
    .filter(([key, value]) => key !== '$typeName' && typeof value === 'object' && value !== null)
    .map(([, value]) => comprehensionDepth(value));
  return own + Math.max(0, ...children);
}

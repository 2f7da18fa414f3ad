import { RE2JS } from 're2js';

/**
 * The one place a pattern written by a tenant (a sops file's `encrypted_regex`, a glob of
 * `spec.source.ignore` or `.sourceignore`, and whatever pattern a later feature reads from Git or a
 * spec) becomes something that matches. It is compiled with RE2's semantics (re2js, a port of Go's
 * `regexp`), which match in time linear in the text whatever the pattern: `^(a+)+$` against forty `a`s
 * and a `-` takes microseconds here, where a backtracking engine (JavaScript's `RegExp`) takes longer
 * than the controller's liveness probe waits. A pattern RE2 cannot read (a backreference, a lookahead)
 * is refused with the reason, as Go's `regexp.Compile` refuses it. Nothing else in `src/` may call
 * `RegExp` on text it did not write (eslint.config.js, "the pattern door").
 */
export interface TenantPattern {
  /** Whether the pattern matches somewhere in `text` (Go's `MatchString`: unanchored). */
  test(text: string): boolean;
}

/** The longest pattern accepted: far above any real one, and bounds the compiled program. */
const MAX_TENANT_PATTERN_CHARS = 4096;

/** A pattern from tenant input that is not a regular expression RE2 reads; says which and why. */
export class TenantPatternError extends Error {
  override readonly name = 'TenantPatternError';
  readonly code = 'TENANT_PATTERN_REFUSED';
}

/**
 * Compiles `source`, a regular expression in Go's (RE2's) syntax, inline flags such as `(?i)` included.
 * `what` names the pattern in a refusal (`encrypted_regex`). Throws TenantPatternError.
 */
export function compileTenantPattern(source: string, what: string): TenantPattern {
  if (source.length > MAX_TENANT_PATTERN_CHARS) {
    throw new TenantPatternError(
      `${what} is ${source.length} characters long, more than the ${MAX_TENANT_PATTERN_CHARS} a pattern may have`,
    );
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    throw new TenantPatternError(`${what} is not a regular expression RE2 reads: ${reasonOf(error)}`, {
      cause: error,
    });
  }
  return { test: (text) => compiled.test(text) };
}

/** re2js's own words for a syntax error, without the pattern it quotes (it may be long). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const text = message.length > 200 ? `${message.slice(0, 200)}…` : message;
  return text;
}

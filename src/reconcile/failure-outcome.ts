import { classifyFailure } from '../errors/classify-failure.js';
import type { FailureStep } from '../errors/intent-error.js';
import type { Logger } from '../observability/create-logger.js';
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';

/** The step of a reconcile that threw, with what its messages name. */
export type FailedStep =
  | { readonly step: 'fetch'; readonly spec: ResolvedApplySetSpec }
  | { readonly step: 'load'; readonly spec: ResolvedApplySetSpec; readonly revision: string }
  | { readonly step: 'apply'; readonly revision: string; readonly timedOut: boolean };

/**
 * Any error thrown by a step of the reconcile, as an outcome: `classifyFailure` says everything (the
 * intent, the reason, the line the user reads, the objects concerned); this only gives it the shape of
 * an outcome, with the revision tried. An error nothing expected is also logged with its stack, since
 * the status says only what failed, not where in the code.
 */
export function failureOutcome(
  error: unknown,
  at: FailedStep,
  log?: Pick<Logger, 'error'>,
): ReconcileOutcome {
  const failure = classifyFailure(error, stepOf(at));
  if (failure.unexpected) {
    log?.error(
      { err: error, reason: failure.reason },
      `unexpected error at the ${at.step}, a bug: ${failure.message}`,
    );
  }
  const { reason, message } = failure;
  const revision = at.step === 'fetch' ? {} : { revision: at.revision };
  if (failure.intent === 'waiting')
    return { kind: 'waiting', reason, message, ...revision, afterMs: failure.afterMs };
  const errors = failure.errors === undefined ? {} : { errors: failure.errors };
  return { kind: failure.intent, reason, message, ...revision, ...errors };
}

/** What the classifier is told of the step: what the messages about it may name. */
function stepOf(at: FailedStep): FailureStep {
  switch (at.step) {
    case 'fetch':
      return {
        step: 'fetch',
        url: at.spec.source.url,
        secretName: at.spec.source.secretName,
        certSecretName: at.spec.source.certSecretName,
      };
    case 'load':
      return { step: 'load', path: at.spec.source.path, revision: at.revision };
    case 'apply':
      return at;
  }
}

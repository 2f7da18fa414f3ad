import { IntentError, type FailureStep, type ObjectError } from './intent-error.js';

/**
 * Input refused before anything was written (manifests that do not decode, unknown kinds, a refused
 * plan, a nested ApplySet): stalled, since only a change of the input helps. It lists every problem, one
 * a line, so that one run reports all there is to fix.
 */
export abstract class InputRefusedError extends IntentError {
  readonly intent = 'stalled';
  /** One line per problem, each naming file, document and object. */
  abstract readonly problems: readonly string[];
  /** The object a refusal is about when it is not a file's (the set's parent), for status. */
  abstract readonly subject: string | undefined;

  override describe(at: FailureStep | undefined): string {
    if (at?.step !== 'apply') return this.message;
    return `revision ${at.revision} was refused, nothing was changed: ${this.problems.join('; ')}`;
  }

  override objectErrors(): readonly ObjectError[] {
    return this.problems.map((problem) => ({ object: this.subject ?? '', message: problem }));
  }
}

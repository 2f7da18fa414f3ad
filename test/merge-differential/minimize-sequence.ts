import { renameSequence, type DiffSequence } from './generate-sequence.js';
import { runSequence, SequenceMismatch, type DiffContext } from './run-sequence.js';

export interface Disagreement {
  readonly sequence: DiffSequence;
  readonly mismatch: SequenceMismatch;
}

/** Runs a sequence; undefined when both sides agreed to the end, the first disagreement otherwise. */
export async function findDisagreement(
  context: DiffContext,
  sequence: DiffSequence,
): Promise<Disagreement | undefined> {
  try {
    await runSequence(context, sequence);
    return undefined;
  } catch (error) {
    if (error instanceof SequenceMismatch) {
      return { sequence: withSteps(sequence, error.stepIndex + 1), mismatch: error };
    }
    throw error;
  }
}

/**
 * A shorter sequence that still disagrees: the steps after the disagreement go, then each earlier step
 * but the first (the create) is dropped in turn and stays dropped when the rest still disagrees. Every
 * trial runs under a name of its own, since the objects of earlier trials cannot be deleted (writers
 * leave finalizers). `maxTrials` bounds the cost: a trial is a few kubectl processes per step.
 */
export async function minimizeDisagreement(
  context: DiffContext,
  found: Disagreement,
  maxTrials = 12,
): Promise<Disagreement> {
  let best = found;
  let trials = 0;
  for (let i = best.sequence.steps.length - 2; i >= 1 && trials < maxTrials; i--) {
    // An earlier trial may have ended sooner: the last step is the disagreement, and stays.
    if (i > best.sequence.steps.length - 2) continue;
    const steps = best.sequence.steps.filter((_, index) => index !== i);
    trials++;
    const candidate = renameSequence({ ...best.sequence, steps }, `${found.sequence.name}-m${trials}`);
    const again = await findDisagreement(context, candidate);
    if (again !== undefined) best = again;
  }
  return best;
}

function withSteps(sequence: DiffSequence, count: number): DiffSequence {
  return { ...sequence, steps: sequence.steps.slice(0, count) };
}

/**
 * The reconcile's engine run (step 11 of reconcile-applyset.ts; its request is revision-request.ts's):
 * the run itself with spec.wait's progress handed over as data, and what the run comes to.
 */
import type { Logger } from '../observability/create-logger.js';
import type { ApplySetEngine, ApplySetRequest, HealthWait } from '../apply/apply-set-contract.js';
import type { RunStage } from '../apply/run-stage.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { failureOutcome } from '../reconcile/failure-outcome.js';
import { outcomeOf } from './outcome-of.js';
import { refusedImpersonation, type ImpersonatedRun } from '../reconcile/service-account-stall.js';

/**
 * The reports of spec.wait's health wait and of the run's stages (sync waves, hook phases), as the
 * engine makes them: the reconcile reads them in a loop while the engine runs. The engine waits for
 * each to be read and handled before it goes on.
 */
interface HealthWaitFeed extends AsyncIterable<HealthWait | RunStage> {
  /** The engine's `onHealthWait` and `onStage`: resolves once the reader has handled the report. */
  readonly send: (wait: HealthWait | RunStage) => Promise<void>;
}

/**
 * Runs the engine: its result, or what it threw, never a rejection. The reports of a health wait and
 * the run's stages go to the returned feed, which ends when the run does. After a stage is handled the
 * engine goes on from `version()`, the ApplySet's newest version (the reader may have written its status).
 */

export function runEngine(
  engine: ApplySetEngine,
  request: ApplySetRequest,
  version: () => string | undefined = () => undefined,
): { readonly run: Promise<ImpersonatedRun>; readonly waits: HealthWaitFeed } {
  const waits = healthWaitFeed();
  const { wait } = request;
  const run = engine({
    ...request,
    onStage: (stage) => waits.send(stage).then(version),
    ...(wait === undefined ? {} : { wait: { ...wait, onHealthWait: waits.send } }),
  })
    .then(
      (result): ImpersonatedRun => ({ result }),
      (thrown: unknown): ImpersonatedRun => ({ thrown }),
    )
    .finally(waits.close);
  return { run, waits };
}

function healthWaitFeed(): HealthWaitFeed & { readonly close: () => void } {
  const queue: { readonly wait: HealthWait | RunStage; readonly handled: () => void }[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    send: (wait) =>
      new Promise<void>((handled) => {
        if (closed) return handled();
        queue.push({ wait, handled });
        return poke();
      }),
    close: () => {
      closed = true;
      poke();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) {
          try {
            yield next.wait;
          } finally {
            next.handled();
          }
        } else if (closed) {
          return;
        } else {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      }
    },
  };
}

/** How the engine run ended: its outcome, whether its changes were drift, what the set now holds. */
export interface EngineOutcome {
  readonly outcome: ReconcileOutcome;
  /** The run was of a revision and spec already applied in full (see appliedBefore). */
  readonly steady?: boolean;
  /** What the set's inventory records after the engine ran (status.inventory); unset when it did not. */
  readonly held?: readonly ObjectRef[];
  /** The resourceVersion of each object the engine read, by key (steady-runs.ts keeps them). */
  readonly liveVersions?: ReadonlyMap<string, string>;
}

/** The run as an outcome: a refused impersonation stalls, a throw is classified, results tallied. */
export function engineOutcome(
  run: ImpersonatedRun,
  { namespace, serviceAccount }: { namespace: string; serviceAccount: string | undefined },
  { revision, steady, timedOut }: { revision: string; steady: boolean; timedOut: boolean },
  log: Pick<Logger, 'error'>,
): EngineOutcome {
  const refused = refusedImpersonation(run, namespace, serviceAccount, revision);
  if (refused !== undefined) return { outcome: refused };
  if ('thrown' in run)
    return { outcome: failureOutcome(run.thrown, { step: 'apply', revision, timedOut }, log) };
  const { result } = run;
  return {
    outcome: outcomeOf(result, revision),
    steady,
    ...(result.inventory === undefined ? {} : { held: result.inventory }),
    ...(result.liveVersions === undefined ? {} : { liveVersions: result.liveVersions }),
  };
}

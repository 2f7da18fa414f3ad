/**
 * The reconcile's engine run (step 11 of reconcile-applyset.ts): what the engine is asked for this
 * ApplySet at this revision, the run itself with spec.wait's progress handed over as data, and what
 * the run comes to.
 */
import type { Logger } from '../observability/create-logger.js';
import type {
  ApplySetEngine,
  ApplySetRequest,
  HealthWait,
  PruneRequest,
} from '../apply/apply-set-contract.js';
import { APPROVE_PRUNE_ANNOTATION, type ApplySet, type ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { refuseNestedApplySets } from '../api/refuse-nested-applysets.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import { parentOf } from './applyset-api.js';
import { failureOutcome } from './failure-outcome.js';
import { outcomeOf } from './outcome-of.js';
import { refusedImpersonation, type ImpersonatedRun } from './service-account-stall.js';

/** What the engine is asked to do for this ApplySet at this revision. */
export function engineRequest(
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  files: readonly ManifestFile[],
  { revision, steady, allowNested }: { revision: string; steady: boolean; allowNested: boolean },
  signal: AbortSignal,
): ApplySetRequest {
  const { namespace } = applySet.metadata;
  return {
    input: {
      files,
      parent: parentOf(applySet),
      defaultNamespace: spec.targetNamespace ?? namespace,
      // No manifest creates or changes an ApplySet unless the operator granted nesting: an ApplySet
      // names its own ServiceAccount, so one would hand its repository a sibling's identity.
      ...(allowNested ? {} : { screenObjects: refuseNestedApplySets }),
    },
    write: {
      dryRun: false,
      force: spec.force,
      adopt: spec.adopt,
      // driftMode Warn holds back only drift: a new revision or spec is applied in full.
      drift: { correct: !(steady && spec.driftMode === 'Warn'), ignore: spec.driftIgnore },
    },
    prune: pruneRequest(applySet, spec, revision),
    ...(spec.wait ? { wait: { timeoutMs: spec.timeoutMs, healthChecks: spec.healthChecks } } : {}),
    signal,
  };
}

function pruneRequest(applySet: ApplySet, spec: ResolvedApplySetSpec, revision: string): PruneRequest {
  if (!spec.prune) return { mode: 'off' };
  if (spec.pruneDryRun) return { mode: 'dry-run', allowEmpty: spec.allowEmpty };
  // A revision approved with applyset.dev/approve-prune prunes past the limit.
  const approved = applySet.metadata.annotations?.[APPROVE_PRUNE_ANNOTATION] === revision;
  return {
    mode: 'delete',
    allowEmpty: spec.allowEmpty,
    ...(spec.pruneLimit === undefined || approved ? {} : { limit: spec.pruneLimit }),
  };
}

/**
 * Whether `revision` and the current spec were already applied in full: Ready True for this
 * generation, at this revision. A change such a run makes to an object was made by someone else.
 */
export function appliedBefore(applySet: ApplySet, revision: string): boolean {
  const ready = applySet.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    applySet.status?.lastAppliedRevision === revision &&
    ready?.status === 'True' &&
    ready.observedGeneration !== undefined &&
    ready.observedGeneration === applySet.metadata.generation
  );
}

/**
 * The reports of spec.wait's health wait, as the engine makes them: the reconcile reads them in a
 * loop while the engine runs. The engine waits for each to be read and handled before it polls again.
 */
interface HealthWaitFeed extends AsyncIterable<HealthWait> {
  /** The engine's `onHealthWait`: resolves once the reader has handled the report. */
  readonly send: (wait: HealthWait) => Promise<void>;
}

/**
 * Runs the engine: its result, or what it threw, never a rejection. The reports of a health wait go
 * to the returned feed, which ends when the run does.
 */
export function runEngine(
  engine: ApplySetEngine,
  request: ApplySetRequest,
): { readonly run: Promise<ImpersonatedRun>; readonly waits: HealthWaitFeed } {
  const waits = healthWaitFeed();
  const { wait } = request;
  const run = engine(
    wait === undefined ? request : { ...request, wait: { ...wait, onHealthWait: waits.send } },
  )
    .then(
      (result): ImpersonatedRun => ({ result }),
      (thrown: unknown): ImpersonatedRun => ({ thrown }),
    )
    .finally(waits.close);
  return { run, waits };
}

function healthWaitFeed(): HealthWaitFeed & { readonly close: () => void } {
  const queue: { readonly wait: HealthWait; readonly handled: () => void }[] = [];
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
  };
}

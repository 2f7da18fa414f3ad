/**
 * Step 8 of a reconcile (reconcile-applyset.ts): the source read as the set's account, or, when
 * nothing changed since the last run in full (steady-runs.ts), that run's outcome without the files.
 */
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import { sourceMaxAgeMs, type ApplySetView } from '../api/applyset-view.js';
import { createKubeObjectApi, type ResourceLocation } from '../kube/kube-object-api.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { fetchRevision, readRevision } from '../source/read-source.js';
import type { SetAccount } from '../source/source-adapter.js';
import type { EngineOutcome } from './engine-step.js';
import { scheduledKustomize } from './kustomize-schedule.js';
import type { ReconcileContext, ReconcilerOptions } from './reconcile-context.js';
import type { SteadyInputs, SteadyRuns } from './steady-runs.js';
import { targetCluster, type TargetCluster } from './target-cluster.js';

/**
 * How step 11 ran: in full through the engine, with what steady-runs.ts keys it by (`inputs`), or not
 * at all because nothing changed since the last run in full (`unchanged`).
 */
export type RevisionRun = EngineOutcome & { readonly inputs?: SteadyInputs; readonly unchanged?: true };

/** What step 8 reads as: the set's view, its checked spec, its account, the run's signal. */
interface SourceStepInput {
  readonly view: ApplySetView;
  readonly spec: ResolvedApplySetSpec;
  readonly account: SetAccount;
  readonly signal: AbortSignal;
}

/** Step 8: the revision's files, or the run's outcome (the source stopped it, or nothing changed). */
export async function readSourceStep(
  ctx: ReconcileContext,
  options: ReconcilerOptions,
  { view, spec, account, signal }: SourceStepInput,
  steadyRuns: SteadyRuns,
): Promise<
  RevisionRun | { target: TargetCluster; files: ManifestFile[]; revision: string; inputs: SteadyInputs }
> {
  const { applySet: given } = view;
  const { tenancy } = options;
  // 8. The source, in one call whatever its type (src/source/read-source.ts): its credentials Secret
  // read as that account, the revision fetched into the shared cache, the files under spec.source.path
  // read (or the kustomization built), the sops files decrypted in memory with spec.decryption's age
  // identities, read as that account too. A reconcile on schedule takes a fetch of the same source
  // younger than its interval, a new set (opted in, --shared-fetch-max-age) one another set made seconds
  // ago; a changed spec or one asked for goes to the network. Anything wrong stops the run here.
  // A chart is rendered for the cluster the set applies to (src/controller/target-cluster.ts).
  const target = targetCluster(
    {
      ...account,
      remoteClusters: options.remoteClusters,
      account,
      kubeConfig: spec.kubeConfig,
      signal,
      log: ctx.log,
    },
    options.capabilities,
  );
  const access = {
    account,
    secretRefs: tenancy,
    maxAgeMs: sourceMaxAgeMs(given, spec.intervalMs, options.sharedFetchMaxAgeMs),
    log: ctx.log,
    metrics: ctx.metrics,
    now: ctx.now,
    kustomize: scheduledKustomize(ctx, options, spec, signal),
    ...(target.capabilities === undefined ? {} : { capabilities: target.capabilities }),
  };
  const fetched = await fetchRevision(options.sources, spec, access, signal);
  if ('done' in fetched) return { outcome: target.sourceOutcome(fetched.done) };
  const { revision } = fetched.value;
  // Nothing changed since the last run in full (steady-runs.ts): the ApplySet, the revision, the account
  // and every object's resourceVersion as it saw them. Its outcome again, without the files or merges.
  const inputs: SteadyInputs = { applySet: given, spec, revision, user: account.user };
  const { memberWatches } = options;
  const reads = () => ({
    api: createKubeObjectApi(account.reader),
    mapper: options.restMapper,
    signal,
    ...(memberWatches === undefined
      ? {}
      : {
          watched: (location: ResourceLocation, names: readonly string[]) =>
            memberWatches.versionsOf(account.user, location, names, ctx.key),
        }),
  });
  const unchanged = await steadyRuns.unchanged(ctx.key, inputs, reads);
  if (unchanged !== undefined) {
    ctx.log.debug({ revision }, 'nothing changed since the last run in full; not applied again');
    ctx.metrics.countUnchanged();
    return { outcome: unchanged, steady: true, unchanged: true };
  }
  const read = await readRevision(fetched.value, spec, access, signal);
  if ('done' in read) return { outcome: target.sourceOutcome(read.done) };
  return { target, files: read.value.files, revision, inputs };
}

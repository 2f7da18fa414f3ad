/**
 * What would keep the controller from applying an ApplySet now, checked as its reconcile checks it
 * (steps 4 and 6 of src/controller/reconcile-applyset.ts): spec.suspend, then spec.dependsOn. The
 * preview still reads and previews the revision, so it can say what the run would do once it may.
 */
import type { ApplySet, ResolvedApplySetSpec } from '../api/applyset-types.js';
import { lenientApplySetSpec } from '../api/resolve-applyset-spec.js';
import type { ApplySetApi } from '../kube/applyset-api.js';
import type { KubeClient } from '../kube/kube-client.js';
import { createRestMapper } from '../kube/rest-mapper.js';
import { dependencyCheck } from '../reconcile/check-dependencies.js';
import { checkObjectDependencies } from '../reconcile/check-object-dependencies.js';
import type { PreviewHold } from './applyset-preview.js';

/** Step 4: suspended, as the reconcile reads it (leniently: an invalid spec is still suspended). */
export function suspensionHolds(applySet: ApplySet): PreviewHold[] {
  return lenientApplySetSpec(applySet.spec).suspend ? [{ kind: 'suspended' }] : [];
}

/**
 * Step 6: the dependencies, read and judged by the reconcile's own check, and the outcome it would end
 * the run with (DependencyNotReady, DependencyCycle, CrossNamespaceRefRefused) as a hold.
 */
export async function dependencyHolds(
  api: ApplySetApi,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  options: {
    readonly noCrossNamespaceRefs: boolean;
    readonly signal: AbortSignal;
    /** Reads the objects of spec.dependsOn as the ApplySet's account (`user`), as the reconcile does. */
    readonly account: { readonly client: KubeClient; readonly clientAs: (user: string) => KubeClient };
    readonly user: string;
  },
): Promise<PreviewHold[]> {
  const { outcome, waitingFor } = await dependencyCheck(api, applySet, spec, options);
  if (outcome !== undefined && outcome.kind !== 'applied')
    return [{ kind: 'dependencies', reason: outcome.reason, message: outcome.message, waitingFor }];
  // The objects of spec.dependsOn, read now: those not Current hold the run, each with its state.
  const { account, user } = options;
  const mapper = createRestMapper(account.client);
  const reader = { reader: account.clientAs(user), user, namespace: applySet.metadata.namespace };
  const objects = await checkObjectDependencies(mapper, reader, spec, options);
  if (objects === undefined || objects.kind === 'applied') return [];
  return [{ kind: 'dependencies', reason: objects.reason, message: objects.message, waitingFor: [] }];
}

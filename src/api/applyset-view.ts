/**
 * One ApplySet as everything that acts for it sees it, computed once from the object read: its spec
 * resolved (or every problem of it named), the few fields that matter even when it is invalid, the
 * account it acts as (applyset-account.ts, the one rule) and the Secrets it names. A reconcile makes
 * one view and hands it to every step, the status writer and the notifier; the finalizer, the web
 * view, the watch index and the webhooks make theirs with this same function.
 */
import { applySetAccount, type ApplySetAccount } from './applyset-account.js';
import {
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type ApplySet,
  type ResolvedApplySetSpec,
  type ResolveApplySetSpecResult,
} from './applyset-types.js';
import {
  lenientApplySetSpec,
  resolveApplySetSpec,
  type LenientApplySetSpec,
} from './resolve-applyset-spec.js';

export interface ApplySetView {
  readonly applySet: ApplySet;
  /** The spec as the CRD checks it: resolved, or every wrong field named. */
  readonly resolved: ResolveApplySetSpecResult;
  /**
   * What is read of the spec whatever else is wrong with it (suspend, intervals, the source's URL and
   * ref, the Secrets it names, the deletion policy): from the resolved spec when it is valid.
   */
  readonly lenient: LenientApplySetSpec;
  /** The account it acts as: its spec.serviceAccountName, else the controller's default, else none. */
  readonly account: ApplySetAccount;
}

/**
 * The view of `applySet` for a controller whose default account is `defaultServiceAccountName`
 * (undefined: `--apply-as-controller`). A valid spec is parsed once; an invalid one a second time,
 * leniently.
 */
export function applySetView(
  applySet: ApplySet,
  defaultServiceAccountName: string | undefined,
): ApplySetView {
  const resolved = resolveApplySetSpec(applySet.spec, applySet.metadata);
  const lenient = resolved.ok ? lenientOf(resolved.spec) : lenientApplySetSpec(applySet.spec);
  const account = applySetAccount(applySet.metadata.namespace, lenient, defaultServiceAccountName);
  return { applySet, resolved, lenient, account };
}

/**
 * `--shared-fetch-max-age`'s default: off. A new ApplySet applies the head of its ref as the server has
 * it when it is first reconciled, as `applyset diff` showed; an operator of a fleet created in bulk opts
 * in to a few seconds of staleness for one fetch instead of one per ApplySet.
 */
const DEFAULT_SHARED_FETCH_MAX_AGE_MS = 0;

/**
 * How old a fetch of this set's source (same URL, ref and credentials) it takes instead of asking the
 * server: one younger than its interval on schedule; for its very first reconcile, one another set made
 * less than `sharedFetchMaxAgeMs` ago (a fleet created at once then fetches a repository once, not once
 * per set); none for a changed spec (a resumed set applies what its preview showed) nor when a
 * reconcile was asked for (the annotation, a webhook's push).
 */
export function sourceMaxAgeMs(
  applySet: ApplySet,
  intervalMs: number,
  sharedFetchMaxAgeMs = DEFAULT_SHARED_FETCH_MAX_AGE_MS,
): number {
  if (reconcileRequested(applySet)) return 0;
  if (applySet.status?.observedGeneration === undefined) return Math.min(sharedFetchMaxAgeMs, intervalMs);
  return specHandled(applySet) ? intervalMs : 0;
}

function specHandled(applySet: ApplySet): boolean {
  return (
    applySet.status?.observedGeneration !== undefined &&
    applySet.status.observedGeneration === applySet.metadata.generation
  );
}

function reconcileRequested(applySet: ApplySet): boolean {
  const requested = applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  return requested !== undefined && requested !== applySet.status?.lastHandledReconcileAt;
}

function lenientOf(spec: ResolvedApplySetSpec): LenientApplySetSpec {
  const { source } = spec;
  return {
    suspend: spec.suspend,
    deletionPolicy: spec.deletionPolicy,
    serviceAccountName: spec.serviceAccountName,
    targetNamespace: spec.targetNamespace,
    intervalMs: spec.intervalMs,
    retryIntervalMs: spec.retryIntervalMs,
    url: source.url,
    ref: source.ref,
    secretName: source.secretName,
    secretNamespace: source.secretNamespace,
    kubeConfig: spec.kubeConfig,
    decryptionSecretName: spec.decryption?.secretName,
    valuesFromSecretNames: (spec.helm?.valuesFrom ?? []).flatMap((reference) =>
      reference.kind === 'Secret' ? [reference.name] : [],
    ),
  };
}

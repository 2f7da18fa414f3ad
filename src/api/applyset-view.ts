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
 * Whether this reconcile is the interval's: the spec it acts on was handled before and no reconcile
 * was requested since. A first reconcile, a changed spec or a request are not on schedule.
 */
export function onSchedule(applySet: ApplySet): boolean {
  const requested = applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  return (
    applySet.status?.observedGeneration !== undefined &&
    applySet.status.observedGeneration === applySet.metadata.generation &&
    (requested === undefined || requested === applySet.status.lastHandledReconcileAt)
  );
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

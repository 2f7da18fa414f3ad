/**
 * A preview of an ApplySet: what the controller's next reconcile would do with a revision (the
 * ApplySet's own ref, another ref of its repository, or a local checkout), computed by the reconcile's
 * own steps (steps 5 to 8 and 11 of src/controller/reconcile-applyset.ts: the same view, the same
 * functions of src/reconcile/ and the same source call, readSource) with the engine in dry run, as the
 * account the controller applies the set as. Nothing is written.
 */
import { DEFAULT_DEPLOYER_ACCOUNT } from '../api/applyset-account.js';
import { setMaxListeners } from 'node:events';
import type { ApplySet, ResolvedApplySetSpec, ResolvedGitRef } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { applySetView } from '../api/applyset-view.js';
import type { ApplySetRequest, ApplySetResult } from '../apply/apply-set-contract.js';
import type { RunOrder } from '../apply/run-stage.js';
import { createApplySetEngine } from '../apply/create-apply-set-engine.js';
import { createApplySetApi } from '../kube/applyset-api.js';
import type { Step } from '../api/reconcile-outcome.js';
import { checkedSpec, missingServiceAccount } from '../reconcile/account-step.js';
import { revisionRequest } from '../reconcile/revision-request.js';
import { readSource } from '../source/read-source.js';
import type { SourceAdapter, SourceAdapters } from '../source/source-adapter.js';
import { classifyFailure } from '../errors/classify-failure.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { OpenApiDocumentStore } from '../kube/openapi-disk-cache.js';
import type { KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { ManifestFile } from '../manifests/manifest-limits.js';
import { directoryReader } from '../source/directory-reader.js';
import { createCapabilitiesSource } from '../kube/cluster-capabilities.js';
import { semverRangeProblem } from '../source/oci/select-semver-tag.js';
import type {
  ApplySetPreview,
  PreviewedRevision,
  PreviewOrder,
  PreviewSource,
  PreviewStop,
} from './applyset-preview.js';
import { driftReportOf, previewEntries, type PreviewPolicy } from './preview-entries.js';
import { dependencyHolds, suspensionHolds } from './preview-holds.js';
import { PreviewRefusedError } from './preview-refused-error.js';

export interface PreviewRequest {
  readonly namespace: string;
  readonly name: string;
  readonly source: PreviewSource;
  readonly access: PreviewAccess;
  /** The controller's `--default-service-account`; default `applyset-deployer`, as the controller's. */
  readonly defaultServiceAccountName?: string;
  /** How a kustomization is built: the controller's `--kustomize-*` flags; their defaults if not given. */
  readonly kustomize?: KustomizeOptions;
  /** The controller's `--allow-nested-applysets`. */
  readonly allowNestedApplySets?: boolean;
  /**
   * The controller's `--allow-cross-namespace-refs`: without it (its default) a spec.dependsOn naming
   * another namespace is refused, as the controller refuses it.
   */
  readonly allowCrossNamespaceRefs?: boolean;
  readonly signal?: AbortSignal;
}

/** How the preview reaches the cluster and the repository, as the caller. */
export interface PreviewAccess {
  /** The caller's own client: reads the ApplySet and its account, asks whether it may impersonate. */
  readonly client: KubeClient;
  /** A client with the caller's credentials acting as `user` (Impersonate-User). */
  readonly clientAs: (user: string) => KubeClient;
  /** The source types read, as the controller reads them (src/source/source-adapters.ts). */
  readonly sources: SourceAdapters;
  readonly openApiStore?: OpenApiDocumentStore;
}

/** The preview reports what it found as data, never as log lines or metrics. */
const quiet = { debug: () => undefined, warn: () => undefined, error: () => undefined };
const noMetrics = { observeGitFetch: () => undefined };

/** What every preview of one ApplySet says, whatever the run comes to. */
type PreviewHead = Pick<ApplySetPreview, 'applySet' | 'identity' | 'previewed' | 'holds'>;

/**
 * What the controller would do with the revision. Throws PreviewRefusedError when the ApplySet is
 * missing or the caller may not impersonate its account; a run the controller would stop (an invalid
 * spec, a missing account, an unreadable Secret, a failed fetch, refused manifests, the prune limit)
 * is a preview with `stopped` set.
 */
export async function previewApplySet(request: PreviewRequest): Promise<ApplySetPreview> {
  const { namespace, name, access } = request;
  const signal = request.signal ?? new AbortController().signal;
  const api = createApplySetApi(access.client);
  const applySet = await api.get(namespace, name, signal);
  if (applySet === undefined) {
    throw new PreviewRefusedError(
      'ApplySetNotFound',
      `applyset "${name}" not found in namespace ${namespace}`,
    );
  }
  // The view the controller's reconcile makes of it: the spec parsed once, the account it acts as.
  const fallback = request.defaultServiceAccountName ?? DEFAULT_DEPLOYER_ACCOUNT;
  const view = applySetView(applySet, fallback);
  // 5. The spec as the CRD checks it; the account (step 7's) is named whatever it says.
  const checked = checkedSpec(view.resolved);
  const serviceAccount = view.account.serviceAccount ?? fallback;
  const user = view.account.user ?? '';
  const base: PreviewHead = {
    applySet: { namespace, name },
    identity: { serviceAccount: `${namespace}/${serviceAccount}`, user },
    previewed: previewedOf(request.source, applySet),
    // 4. Suspended: the controller would stop here; the preview says so and goes on.
    holds: suspensionHolds(applySet),
  };
  if ('done' in checked) return stopped(base, stopOf(checked.done));
  const spec = withPreviewRef(checked.value, request.source);
  // 6. The dependencies the run would wait for; the preview names them and goes on.
  const options = { noCrossNamespaceRefs: request.allowCrossNamespaceRefs !== true, signal, user };
  const dependencies = await dependencyHolds(api, applySet, spec, { ...options, account: access });
  const head: PreviewHead = { ...base, holds: [...(base.holds ?? []), ...dependencies] };
  // The controller applies such a set to another cluster (step 9); a preview against this one would
  // show the wrong objects, so it says so rather than guess.
  if (spec.kubeConfig !== undefined) {
    return stopped(head, {
      reason: 'RemoteClusterNotPreviewed',
      message: `the ApplySet is applied to the cluster of Secret ${namespace}/${spec.kubeConfig.secretName} (spec.kubeConfig), which the preview does not reach yet; nothing was computed`,
    });
  }
  await refuseUnlessImpersonating(access.client, namespace, serviceAccount, signal);
  const runSignal = AbortSignal.any([signal, AbortSignal.timeout(spec.timeoutMs)]);
  setMaxListeners(0, runSignal);

  // 7 to 10. The account must exist; the credentials are read as it; the revision is read.
  const missing = await missingServiceAccount({ api, namespace }, spec, serviceAccount, runSignal);
  if (missing !== undefined) return stopped(head, stopOf(missing));
  const reader = access.clientAs(user);
  const read = await readRevision(request, { spec, reader, user }, runSignal);
  if ('done' in read) return stopped(head, stopOf(read.done));
  const { files, revision, previewed } = read.value;
  return runDry({ ...head, previewed }, { applySet, spec, files, revision }, request, runSignal);
}

/** Step 11: the engine as the account, in dry run, asked exactly what the reconcile would ask. */
async function runDry(
  head: PreviewHead,
  { applySet, spec, files, revision }: RevisionToRun,
  request: PreviewRequest,
  signal: AbortSignal,
): Promise<ApplySetPreview> {
  const { access } = request;
  const allowNested = request.allowNestedApplySets === true;
  const { request: asked } = revisionRequest(applySet, spec, files, { revision, allowNested }, signal);
  const engine = createApplySetEngine({
    kubeClient: access.clientAs(head.identity.user),
    parentKubeClient: access.client,
    ...(access.openApiStore === undefined ? {} : { openApiStore: access.openApiStore }),
  });
  let result: ApplySetResult;
  try {
    result = await engine(dryRunOf(asked));
  } catch (error) {
    const failure = classifyFailure(error, { step: 'apply', revision: revision ?? '', timedOut: false });
    const preview = stopped(head, { reason: failure.reason, message: failure.message });
    const problems = failure.problems ?? [];
    return { ...preview, entries: problems.map((message) => ({ kind: 'error', message })) };
  }
  // driftMode Warn: the engine's dry run reports drift as the real run would (write.drift is the run's).
  const policy: PreviewPolicy = prunePolicyOf(asked, result);
  const outcome = previewEntries(result.outcomes, policy);
  const drifted = driftReportOf(outcome.entries, revision ?? '');
  const { order } = result;
  return {
    ...head,
    ...outcome,
    waitsFor: spec.wait ? spec.healthChecks : [],
    ...(order === undefined ? {} : { order: previewOrderOf(order) }),
    ...(drifted === undefined ? {} : { drifted }),
  };
}

/** The engine's order as the preview's data: each hook by its object, phases, weight and policies. */
function previewOrderOf(order: RunOrder): PreviewOrder {
  return {
    syncWaves: order.syncWaves,
    hooks: order.hooks.map((hook) => ({
      ref: hook.object.ref,
      phases: hook.phases,
      weight: hook.weight,
      deletePolicies: hook.deletePolicies,
    })),
  };
}

interface RevisionToRun {
  readonly applySet: ApplySet;
  readonly spec: ResolvedApplySetSpec;
  readonly files: readonly ManifestFile[];
  /** The Git revision (`main@sha1:…`); undefined for a local directory. */
  readonly revision: string | undefined;
}

function stopped(head: PreviewHead, stop: PreviewStop): ApplySetPreview {
  return { ...head, entries: [], unchanged: 0, waitsFor: [], stopped: stop, failed: true };
}

function stopOf(done: ReconcileOutcome): PreviewStop {
  return done.kind === 'applied'
    ? { reason: 'ReconciliationSucceeded', message: '' }
    : { reason: done.reason, message: done.message };
}

/**
 * The request the reconcile builds, as a dry run. A prune the spec holds back (prune false or DryRun)
 * is still judged, as a deletion would be, so the preview can name what stays and why.
 */
function dryRunOf(asked: ApplySetRequest): ApplySetRequest {
  const { prune } = asked;
  return {
    ...asked,
    // The server judges every write, as kubectl diff asks it: its refusals and webhooks show.
    write: { ...asked.write, dryRun: true, askServer: true },
    prune:
      prune.mode === 'delete'
        ? prune
        : { mode: 'delete', allowEmpty: prune.mode === 'off' || prune.allowEmpty },
  };
}

function prunePolicyOf(
  asked: ApplySetRequest,
  result: ApplySetResult,
): Pick<PreviewPolicy, 'heldBack' | 'overLimit'> {
  if (asked.prune.mode === 'off') return { heldBack: 'spec.prune is false' };
  if (asked.prune.mode === 'dry-run') return { heldBack: 'spec.prune is DryRun' };
  // The engine judged the limit as it judges a real run's, and said what the run would stop with.
  const over = result.pruneLimitExceeded;
  return over === undefined ? {} : { overLimit: over };
}

/**
 * The caller may act as the account (Impersonate-User) or the preview is refused: a preview as the
 * caller would show what the caller may do, not what the account may.
 */
async function refuseUnlessImpersonating(
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
  signal: AbortSignal,
): Promise<void> {
  const review = (await client.request({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          verb: 'impersonate',
          resource: 'serviceaccounts',
          namespace,
          name: serviceAccount,
        },
      },
    }),
    signal,
  })) as { status?: { allowed?: boolean } };
  if (review.status?.allowed === true) return;
  throw new PreviewRefusedError(
    'ImpersonationNotAllowed',
    `you may not impersonate ServiceAccount ${namespace}/${serviceAccount}, the account the controller applies this ApplySet as, so no preview was computed: one as you would not show what that account may do. Ask for the verb impersonate on serviceaccounts, resourceNames [${serviceAccount}], in namespace ${namespace}`,
  );
}

/**
 * Step 8 for the source previewed, by the reconcile's own call (readSource): the manifests, and the
 * revision they are of. A local checkout is read as a source of its own, in place of the spec's.
 */
async function readRevision(
  request: PreviewRequest,
  { spec, reader, user }: { spec: ResolvedApplySetSpec; reader: KubeClient; user: string },
  signal: AbortSignal,
): Promise<Step<{ files: ManifestFile[]; revision: string | undefined; previewed: PreviewedRevision }>> {
  const { source, namespace } = request;
  const sources: SourceAdapters =
    source.kind === 'local'
      ? { [spec.source.kind]: localCheckout(source.directory) }
      : request.access.sources;
  const access = {
    account: { reader, user, namespace },
    // The caller names the ApplySet of their namespace; its Secrets are read as its account.
    secretRefs: { allowSecretRefsFrom: new Set<string>(), noCrossNamespaceRefs: false },
    maxAgeMs: 0,
    log: quiet,
    metrics: noMetrics,
    now: Date.now,
    ...kustomizeOf(request),
    // A chart renders for the cluster previewed against, as the controller renders it for its own.
    capabilities: createCapabilitiesSource(reader),
  };
  const read = await readSource(sources, spec, access, signal);
  if ('done' in read) return read;
  const { files, revision, id } = read.value;
  if (source.kind === 'local') {
    return {
      value: { files, revision: undefined, previewed: { kind: 'local', directory: source.directory } },
    };
  }
  // An artifact's `commit` is its manifest digest, which its revision names already.
  return { value: { files, revision, previewed: { kind: 'git', revision, commit: id } } };
}

/** A local checkout as the source read: its directory is the revision's tree, fetched from nowhere. */
function localCheckout(directory: string): SourceAdapter {
  return {
    read: () => Promise.resolve({ value: { revision: directory, id: '', tree: directoryReader(directory) } }),
  };
}

function kustomizeOf({ kustomize }: PreviewRequest): { kustomize?: KustomizeOptions } {
  return kustomize === undefined ? {} : { kustomize };
}

/** What a preview that stops before its fetch says it previewed. */
function previewedOf(source: PreviewSource, applySet: ApplySet): PreviewedRevision {
  if (source.kind === 'local') return { kind: 'local', directory: source.directory };
  if (source.kind === 'ref') return { kind: 'git', revision: source.ref, commit: '' };
  const chart = applySet.spec?.helm?.chart;
  if (typeof chart === 'string')
    return { kind: 'git', revision: `${chart} ${applySet.spec?.helm?.version ?? '*'}`, commit: '' };
  // The ref as written: the spec may be invalid, so it is read leniently.
  const ref: Partial<Record<'branch' | 'tag' | 'commit', unknown>> = applySet.spec?.source?.ref ?? {};
  const named = [ref.commit, typeof ref.tag === 'string' ? `refs/tags/${ref.tag}` : undefined, ref.branch];
  const revision = named.find((name): name is string => typeof name === 'string') ?? '(no ref)';
  return { kind: 'git', revision, commit: '' };
}

/**
 * The spec with `--ref` in place of its own ref: a branch, `refs/tags/NAME`, or a 40-digit commit; for
 * a chart of a repository, the version range in place of spec.helm.version (`--ref 1.3.0`).
 */
function withPreviewRef(spec: ResolvedApplySetSpec, source: PreviewSource): ResolvedApplySetSpec {
  if (source.kind !== 'ref') return spec;
  const ref =
    spec.helm?.chart !== undefined && semverRangeProblem(source.ref) === undefined
      ? ({ type: 'semver', range: source.ref } as const)
      : gitRefOf(source.ref);
  return { ...spec, source: { ...spec.source, ref } };
}

/** @internal exported for its unit test */
export function gitRefOf(ref: string): ResolvedGitRef {
  if (/^[0-9a-f]{40}$/.test(ref)) return { type: 'commit', sha: ref };
  if (ref.startsWith('refs/tags/')) return { type: 'tag', name: ref.slice('refs/tags/'.length) };
  return { type: 'branch', name: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref };
}

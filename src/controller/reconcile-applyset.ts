import { setMaxListeners } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { ApplySetEngine, ApplySetParent, ApplySetResult } from '../apply/apply-set-contract.js';
import { ApplySetParentNotFoundError, isApplySetInputError } from '../apply/apply-set-input-error.js';
import {
  GitAuthError,
  GitInvalidPathError,
  GitPathNotFoundError,
  GitUnsafeTreeError,
  isGitSourceError,
} from '../git/git-error.js';
import type { GitRef } from '../git/git-ref.js';
import type { GitAuth, GitSource } from '../git/git-source.js';
import { ParentChangedError } from '../apply/parent-changed-error.js';
import { InventoryParseError } from '../inventory/parse-inventory.js';
import { MetadataKeys } from '../inventory/metadata-keys.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { describeManifestSource, ManifestSetError } from '../manifests/manifest-error.js';
import { objectRefKey } from '../manifests/object-ref.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { ControllerMetrics, ReconcileResult } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import { createApplySetApi } from './applyset-api.js';
import {
  APPLYSET_API_VERSION,
  APPLYSET_FINALIZER,
  APPLYSET_GROUP,
  APPLYSET_KIND,
  APPLYSET_PLURAL,
  APPLYSET_VERSION,
  DEFAULT_INTERVAL_MS,
  DEFAULT_MAX_RETRY_INTERVAL_MS,
  parseDuration,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  resolveApplySetSpec,
  type ApplySet,
  type ApplySetObjectError,
  type ResolvedApplySetSpec,
  type ResolvedGitRef,
} from './applyset-types.js';
import { discoveryOutcome } from './discovery-outcome.js';
import type { EventRecorder } from './event-recorder.js';
import { mapReconcileOutcome, type OutcomeCounts, type ReconcileOutcome } from './map-reconcile-outcome.js';
import type { Requeue } from './work-queue.js';

export interface ReconcilerDeps {
  /** The controller's own identity: the ApplySet, its finalizer and status, and Secrets. */
  readonly client: KubeClient;
  /** The engine acting as `user` (impersonated) or as the controller itself (undefined). */
  readonly engineFor: (user: string | undefined) => ApplySetEngine;
  /**
   * `--default-service-account`: the ServiceAccount, in the ApplySet's own namespace, that an ApplySet
   * without spec.serviceAccountName is applied as. Undefined: such an ApplySet is applied as the controller.
   */
  readonly defaultServiceAccountName?: string | undefined;
  readonly gitSource: GitSource;
  readonly recordEvent: EventRecorder;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  /** Aborted when the controller must stop at once (after the shutdown grace period). */
  readonly signal: AbortSignal;
}

/** One reconcile of the ApplySet `namespace/name`; the queue calls it and schedules the next. */
export type Reconciler = (key: string) => Promise<Requeue>;

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const api = createApplySetApi(deps.client);

  return async (key) => {
    const [namespace = '', name = ''] = key.split('/');
    const log = deps.logger.child({ applyset: key, reconcileId: randomBytes(4).toString('hex') });
    const started = deps.now();
    const finish = (result: ReconcileResult, requeue: Requeue): Requeue => {
      deps.metrics.observeReconcile(result, (deps.now() - started) / 1000);
      log.debug({ result, requeue }, 'reconcile finished');
      return requeue;
    };

    // 1. Read the ApplySet; gone means nothing to do (its children were handled by the finalizer).
    const applySet = await api.get(namespace, name, deps.signal);
    if (applySet === undefined) return finish('deleted', { kind: 'none' });

    // 2. Deleted: prune every child (deletionPolicy Delete) or leave them (Orphan), then let it go.
    if (applySet.metadata.deletionTimestamp !== undefined) {
      return finish('deleted', await finalize(applySet, log));
    }

    // 3. First sight: hold the finalizer, so a deletion waits until the children are handled.
    // Every later write of the ApplySet is conditional on the version this run last saw or wrote.
    let version = applySet.metadata.resourceVersion;
    if (!(applySet.metadata.finalizers ?? []).includes(APPLYSET_FINALIZER)) {
      version = await api.setFinalizers(
        applySet,
        [...(applySet.metadata.finalizers ?? []), APPLYSET_FINALIZER],
        deps.signal,
      );
    }

    // 4. Suspended: no fetch, no write, no status change, until the spec changes.
    if (applySet.spec.suspend === true) {
      log.debug({}, 'suspended');
      return finish('suspended', { kind: 'none' });
    }

    // 5-8. Resolve the spec, fetch Git, load the files, apply and prune: an outcome, never a throw.
    const resolved = resolveApplySetSpec(applySet.spec);
    const run: RunOutcome = resolved.ok
      ? await applyFromGit(applySet, resolved.spec, log)
      : {
          outcome: {
            kind: 'stalled',
            reason: 'InvalidSpec',
            message: `invalid spec: ${resolved.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
          },
        };
    const { outcome } = run;
    version = run.parentResourceVersion ?? version;

    // 9. Write the status once, record the events, count the objects.
    const intervalMs = resolved.ok
      ? resolved.spec.intervalMs
      : durationOr(applySet.spec.interval, DEFAULT_INTERVAL_MS);
    const mapped = mapReconcileOutcome({
      outcome,
      previous: applySet.status,
      generation: applySet.metadata.generation,
      intervalMs,
      retryIntervalMs: resolved.ok
        ? resolved.spec.retryIntervalMs
        : Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS),
      now: new Date(deps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      handledReconcileAt: applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
    });
    // A replica that lost the leadership (or is past its shutdown grace) writes nothing more.
    deps.signal.throwIfAborted();
    // Conditional on the version the run planned on and left: a newer writer (a replica that took
    // over while this one was paused, a spec change) wins, and this run's view is read again.
    if ((await api.writeStatus(applySet, mapped.status, version, deps.signal)) === 'conflict') {
      log.debug({}, 'the ApplySet changed during the run; reading it again');
      return finish('retryable', { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS });
    }
    for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
    if (outcome.kind === 'applied' || (outcome.kind !== 'waiting' && outcome.counts !== undefined)) {
      const counts = outcome.counts ?? zeroCounts;
      deps.metrics.countObjects('created', counts.created);
      deps.metrics.countObjects('configured', counts.configured);
      deps.metrics.countObjects('unchanged', counts.unchanged);
      deps.metrics.countObjects('pruned', counts.pruned);
      deps.metrics.countObjects('failed', counts.failed);
      deps.metrics.countObjects('conflict', counts.conflicts);
    }
    const level = outcome.kind === 'applied' ? 'info' : 'warn';
    log[level](
      outcome.kind === 'applied'
        ? { revision: outcome.revision, counts: outcome.counts }
        : { reason: outcome.reason, revision: outcome.revision },
      outcome.kind === 'applied' ? 'reconciled' : `not reconciled: ${outcome.message}`,
    );
    return finish(outcome.kind === 'applied' ? 'success' : outcome.kind, mapped.requeue);
  };

  /** Steps 5-8 for a valid spec. */
  async function applyFromGit(
    applySet: ApplySet,
    spec: ResolvedApplySetSpec,
    log: Logger,
  ): Promise<RunOutcome> {
    const outcome = await fetchAndApply(applySet, spec, log);
    return 'outcome' in outcome ? outcome : { outcome };
  }

  async function fetchAndApply(
    applySet: ApplySet,
    spec: ResolvedApplySetSpec,
    log: Logger,
  ): Promise<ReconcileOutcome | RunOutcome> {
    const { namespace } = applySet.metadata;
    const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(spec.timeoutMs)]);
    // Every concurrent API request of the engine listens on this one signal: many listeners are expected.
    setMaxListeners(0, signal);

    // 5. The account the set is applied as must exist before anything is fetched or written: an
    // impersonated account that does not exist has no rights, and would fail object by object.
    const serviceAccount = spec.serviceAccountName ?? deps.defaultServiceAccountName;
    if (
      serviceAccount !== undefined &&
      !(await api.serviceAccountExists(namespace, serviceAccount, signal))
    ) {
      const given =
        spec.serviceAccountName === undefined ? '--default-service-account' : 'spec.serviceAccountName';
      return {
        kind: 'stalled',
        reason: 'ServiceAccountNotFound',
        message: `ServiceAccount ${namespace}/${serviceAccount} (${given}) does not exist; nothing was applied`,
      };
    }

    // Credentials from the Secret; they go to the Git source and nowhere else (never logged).
    let auth: GitAuth | undefined;
    if (spec.source.secretName !== undefined) {
      const read = await api.readGitAuth(namespace, spec.source.secretName, signal);
      if (read.kind === 'missing') {
        return {
          kind: 'stalled',
          reason: 'SecretNotFound',
          message: `Secret ${namespace}/${spec.source.secretName} (spec.source.secretRef) ${read.problem}`,
        };
      }
      auth = read.auth;
    }

    // 6. Fetch the ref into the shared cache.
    const fetchStarted = deps.now();
    let fetchedCommit;
    try {
      fetchedCommit = await deps.gitSource.fetch(
        { url: spec.source.url, ref: gitRefOf(spec.source.ref), ...(auth === undefined ? {} : { auth }) },
        { signal, timeoutMs: spec.timeoutMs },
      );
      deps.metrics.observeGitFetch('success', (deps.now() - fetchStarted) / 1000);
    } catch (error) {
      deps.metrics.observeGitFetch('failure', (deps.now() - fetchStarted) / 1000);
      return gitFailure(error, spec);
    }
    const revision = fetchedCommit.revision;
    log.debug({ revision, fetched: fetchedCommit.fetched }, 'fetched');

    // 7. Read the files under spec.source.path at that commit straight from the object store.
    let files: ManifestFile[];
    try {
      files = await deps.gitSource.readManifests(
        { url: spec.source.url, commit: fetchedCommit.commit, path: spec.source.path },
        { signal },
      );
    } catch (error) {
      if (error instanceof GitInvalidPathError) {
        return { kind: 'stalled', reason: 'InvalidPath', message: error.message, revision };
      }
      if (error instanceof GitPathNotFoundError) {
        const detail = error.found === 'submodule' ? 'is a submodule' : 'does not exist';
        return {
          kind: 'stalled',
          reason: 'PathNotFound',
          message: `path "${spec.source.path}" ${detail} in revision ${revision}`,
          revision,
        };
      }
      // A crafted tree or a link out of the repository: refusing it is final until the repository changes.
      if (error instanceof GitUnsafeTreeError) {
        return { kind: 'stalled', reason: 'UnsafeRepository', message: error.message, revision };
      }
      return { kind: 'retryable', reason: 'LoadFailed', message: messageOf(error), revision };
    }

    // 8. Apply and prune, the ApplySet itself being the parent, as its ServiceAccount or the default one.
    let result: ApplySetResult;
    try {
      result = await deps.engineFor(impersonatedUser(namespace, serviceAccount))({
        files,
        parent: parentOf(applySet),
        defaultNamespace: spec.targetNamespace ?? namespace,
        prune: spec.prune,
        allowEmpty: spec.allowEmpty,
        force: spec.force,
        adopt: spec.adopt,
        dryRun: false,
        signal,
      });
    } catch (error) {
      return engineFailure(error, revision, signal);
    }
    return {
      outcome: outcomeOf(result, revision),
      ...(result.parentResourceVersion === undefined
        ? {}
        : { parentResourceVersion: result.parentResourceVersion }),
    };
  }

  /**
   * The finalizer path: prune every child with an empty set (deletionPolicy Delete), or release them
   * (Orphan: this set's ownership marks come off, so a new ApplySet of the same name adopts them
   * instead of finding them owned by a uid that no longer exists). Only then is the finalizer removed.
   */
  async function finalize(applySet: ApplySet, log: Logger): Promise<Requeue> {
    const finalizers = applySet.metadata.finalizers ?? [];
    if (!finalizers.includes(APPLYSET_FINALIZER)) return { kind: 'none' };
    const raw = applySet.spec as unknown as Record<string, unknown>;
    // Like Flux, a suspended object is let go without touching its children.
    if (raw['suspend'] === true) {
      log.info({}, 'deleted while suspended: children left untouched');
    } else {
      const orphan = raw['deletionPolicy'] === 'Orphan';
      const { namespace } = applySet.metadata;
      // The same account as the applies: the default one when the spec names none.
      const serviceAccount =
        typeof raw['serviceAccountName'] === 'string'
          ? raw['serviceAccountName']
          : deps.defaultServiceAccountName;
      const target = typeof raw['targetNamespace'] === 'string' ? raw['targetNamespace'] : namespace;
      const verb = orphan ? 'releasing' : 'pruning';
      try {
        const result = await deps.engineFor(impersonatedUser(namespace, serviceAccount))({
          files: [],
          parent: parentOf(applySet),
          defaultNamespace: target,
          prune: !orphan,
          release: orphan,
          allowEmpty: true,
          force: false,
          adopt: false,
          dryRun: false,
          signal: deps.signal,
        });
        const failed = result.outcomes.filter((o) => o.action === 'failed');
        if (failed.length > 0 || !result.completed) {
          const message = `${verb} the children failed: ${failed.map((o) => (o.action === 'failed' ? o.message : '')).join('; ')}`;
          log.warn({ failed: failed.length }, message);
          await deps.recordEvent(subjectOf(applySet), { type: 'Warning', reason: 'PruneFailed', message });
          return { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS };
        }
        const count = result.outcomes.filter((o) =>
          orphan ? o.action === 'prune-skipped' && o.released === true : o.action === 'pruned',
        ).length;
        if (!orphan) deps.metrics.countObjects('pruned', count);
        log.info(
          { [orphan ? 'released' : 'pruned']: count },
          `deleted: children ${orphan ? 'orphaned' : 'pruned'}`,
        );
      } catch (error) {
        if (error instanceof ApplySetParentNotFoundError) return { kind: 'none' };
        if (error instanceof InventoryParseError) return stallDeletion(applySet, error, log);
        log.warn({ err: error }, `deleted: ${verb} the children failed`);
        await deps.recordEvent(subjectOf(applySet), {
          type: 'Warning',
          reason: 'PruneFailed',
          message: `${verb} the children failed: ${messageOf(error)}`,
        });
        return { kind: 'backoff', maxDelayMs: DEFAULT_MAX_RETRY_INTERVAL_MS };
      }
    }
    await api.setFinalizers(
      applySet,
      finalizers.filter((f) => f !== APPLYSET_FINALIZER),
      deps.signal,
    );
    return { kind: 'none' };
  }

  /**
   * deletionPolicy Delete on a damaged inventory: nothing can be pruned safely, and retrying cannot
   * mend it. The deletion waits, stalled, with the way out in the message; a change of the spec
   * (deletionPolicy: Orphan) is a new generation, which the watch hands back at once.
   */
  async function stallDeletion(
    applySet: ApplySet,
    error: InventoryParseError,
    log: Logger,
  ): Promise<Requeue> {
    const message = `${inventoryDamage(error)}; the ApplySet is being deleted with deletionPolicy Delete and nothing can be pruned from a damaged inventory: fix the line, or set spec.deletionPolicy: Orphan to let the ApplySet go and leave its children in place`;
    const intervalMs = durationOr(applySet.spec.interval, DEFAULT_INTERVAL_MS);
    const mapped = mapReconcileOutcome({
      outcome: { kind: 'stalled', reason: 'InventoryInvalid', message },
      previous: applySet.status,
      generation: applySet.metadata.generation,
      intervalMs,
      retryIntervalMs: Math.min(intervalMs, DEFAULT_MAX_RETRY_INTERVAL_MS),
      now: new Date(deps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      handledReconcileAt: applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
    });
    log.warn({ reason: 'InventoryInvalid' }, message);
    await api.writeStatus(applySet, mapped.status, applySet.metadata.resourceVersion, deps.signal);
    for (const event of mapped.events) await deps.recordEvent(subjectOf(applySet), event);
    return mapped.requeue;
  }
}

/** How steps 5-8 ended, and the ApplySet's resourceVersion after the engine's writes of it. */
interface RunOutcome {
  readonly outcome: ReconcileOutcome;
  readonly parentResourceVersion?: string;
}

const INVENTORY_ANNOTATION = MetadataKeys.lastAppliedObjects;

const zeroCounts: OutcomeCounts = {
  created: 0,
  configured: 0,
  unchanged: 0,
  pruned: 0,
  failed: 0,
  conflicts: 0,
};

/** The engine's per-object results as counts, errors and one outcome. */
export function outcomeOf(result: ApplySetResult, revision: string): ReconcileOutcome {
  const counts = { ...zeroCounts, pruneSkipped: 0, adopted: 0 };
  const errors: ApplySetObjectError[] = [];
  const pruneErrors: ApplySetObjectError[] = [];
  const adopted: string[] = [];
  // An object left Git but names another set as owner: kept. Said aloud, since the mark may be forged.
  const keptForOthers: ApplySetObjectError[] = [];
  for (const outcome of result.outcomes) {
    switch (outcome.action) {
      case 'created':
      case 'configured':
      case 'unchanged':
      case 'pruned':
        counts[outcome.action] += 1;
        if (outcome.adopted === true) {
          counts.adopted += 1;
          adopted.push(objectRefKey(outcome.ref));
        }
        break;
      case 'conflict':
      case 'failed': {
        if (outcome.action === 'conflict') counts.conflicts += 1;
        else counts.failed += 1;
        const from = outcome.source === undefined ? '' : `${describeManifestSource(outcome.source)}: `;
        errors.push({ object: objectRefKey(outcome.ref), message: `${from}${outcome.message}` });
        break;
      }
      case 'prune-skipped':
        if (outcome.ownedBy !== undefined) {
          keptForOthers.push({ object: objectRefKey(outcome.ref), message: `not pruned: ${outcome.reason}` });
        }
        if (outcome.incomplete === true) {
          counts.pruneSkipped += 1;
          pruneErrors.push({ object: objectRefKey(outcome.ref), message: `not pruned: ${outcome.reason}` });
        }
        break;
      case 'would-create':
      case 'would-configure':
      case 'would-prune':
        break;
    }
  }
  const first = errors[0];
  const detail = first === undefined ? '' : `: ${first.object}: ${first.message}`;
  if (counts.conflicts > 0) {
    return {
      kind: 'stalled',
      reason: 'OwnershipConflict',
      message: `${counts.conflicts} object(s) in conflict with another owner, left untouched${detail}`,
      revision,
      counts,
      errors,
    };
  }
  if (counts.failed > 0 || !result.completed) {
    return {
      kind: 'retryable',
      reason: 'ApplyFailed',
      message: `${counts.failed} object(s) failed to apply or prune${detail}`,
      revision,
      counts,
      errors,
    };
  }
  // Everything was applied, but objects that left Git could not be judged: they stay in the
  // inventory and are judged again after a backoff; the user must see that the prune is incomplete.
  const skipped = pruneErrors[0];
  if (skipped !== undefined) {
    return {
      kind: 'retryable',
      reason: 'PruneIncomplete',
      message: `applied, but ${counts.pruneSkipped} object(s) that left Git were not pruned: ${skipped.object}: ${skipped.message}`,
      revision,
      counts,
      errors: pruneErrors,
    };
  }
  return {
    kind: 'applied',
    revision,
    counts,
    ...(adopted.length === 0 ? {} : { adopted }),
    ...(keptForOthers.length === 0 ? {} : { keptForOthers }),
  };
}

function gitFailure(error: unknown, spec: ResolvedApplySetSpec): ReconcileOutcome {
  if (error instanceof GitAuthError) {
    const hint =
      spec.source.secretName === undefined
        ? 'the repository needs credentials: set spec.source.secretRef'
        : `check username/password or token in Secret ${spec.source.secretName}`;
    return { kind: 'stalled', reason: 'AuthenticationFailed', message: `${error.message}: ${hint}` };
  }
  if (isGitSourceError(error)) {
    const reason = {
      GIT_UNREACHABLE: 'GitUnreachable',
      GIT_REF_NOT_FOUND: 'GitRefNotFound',
      GIT_REPOSITORY_NOT_FOUND: 'RepositoryNotFound',
      GIT_FETCH_FAILED: 'GitFetchFailed',
      GIT_AUTH_FAILED: 'AuthenticationFailed',
      GIT_SOURCE_NOT_ALLOWED: 'SourceNotAllowed',
      GIT_CREDENTIALS_NOT_FOR_HOST: 'CredentialsNotForHost',
    }[error.code];
    return { kind: error.intent === 'stalled' ? 'stalled' : 'retryable', reason, message: error.message };
  }
  return {
    kind: 'retryable',
    reason: 'GitFetchFailed',
    message: `fetching ${spec.source.url} failed: ${messageOf(error)}`,
  };
}

function engineFailure(error: unknown, revision: string, signal: AbortSignal): ReconcileOutcome {
  const aboutKinds = discoveryOutcome(error, revision);
  if (aboutKinds !== undefined) return aboutKinds;
  if (error instanceof InventoryParseError) {
    return {
      kind: 'stalled',
      reason: 'InventoryInvalid',
      message: `${inventoryDamage(error)}; nothing was applied or pruned`,
      revision,
      errors: [{ object: `last-applied-objects line ${error.line}`, message: error.message }],
    };
  }
  if (error instanceof ParentChangedError) {
    return { kind: 'retryable', reason: 'ParentChanged', message: error.message, revision };
  }
  if (isApplySetInputError(error)) {
    const cause = (error as { cause?: unknown }).cause;
    const errors: ApplySetObjectError[] =
      cause instanceof ManifestSetError
        ? cause.errors.map((e) => ({ object: e.source.file, message: e.message }))
        : error.problems.map((problem) => ({ object: problem.split(':')[0] ?? '', message: problem }));
    return {
      kind: 'stalled',
      reason: 'InvalidManifests',
      message: `revision ${revision} was refused, nothing was changed: ${error.problems.join('; ')}`,
      revision,
      errors,
    };
  }
  if (signal.aborted) {
    return {
      kind: 'retryable',
      reason: 'Timeout',
      message: `the reconcile did not finish in time: ${messageOf(error)}`,
      revision,
    };
  }
  if (error instanceof KubeApiError && !error.retryable) {
    return { kind: 'stalled', reason: 'ApplyFailed', message: error.message, revision };
  }
  return { kind: 'retryable', reason: 'ApplyFailed', message: messageOf(error), revision };
}

/** What a user reads about a damaged inventory: where, which line, and what to do. */
function inventoryDamage(error: InventoryParseError): string {
  return `the inventory annotation ${INVENTORY_ANNOTATION} cannot be read (${error.message}): fix or remove that line`;
}

function parentOf(applySet: ApplySet): ApplySetParent {
  return {
    group: APPLYSET_GROUP,
    version: APPLYSET_VERSION,
    kind: APPLYSET_KIND,
    resource: APPLYSET_PLURAL,
    namespace: applySet.metadata.namespace,
    name: applySet.metadata.name,
    createIfMissing: false,
  };
}

function subjectOf(applySet: ApplySet) {
  return {
    apiVersion: APPLYSET_API_VERSION,
    kind: APPLYSET_KIND,
    namespace: applySet.metadata.namespace,
    name: applySet.metadata.name,
    uid: applySet.metadata.uid,
    resourceVersion: applySet.metadata.resourceVersion,
  };
}

/** `system:serviceaccount:<ns>:<name>`: the user a ServiceAccount's token authenticates as. */
export function impersonatedUser(
  namespace: string,
  serviceAccountName: string | undefined,
): string | undefined {
  return serviceAccountName === undefined
    ? undefined
    : `system:serviceaccount:${namespace}:${serviceAccountName}`;
}

function gitRefOf(ref: ResolvedGitRef): GitRef {
  switch (ref.type) {
    case 'branch':
      return { branch: ref.name };
    case 'tag':
      return { tag: ref.name };
    case 'commit':
      return { commit: ref.sha };
  }
}

function durationOr(text: string | undefined, fallback: number): number {
  try {
    return text === undefined ? fallback : parseDuration(text);
  } catch {
    return fallback;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

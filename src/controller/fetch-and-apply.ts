import { excludeFiles } from '../manifests/exclude-files.js';
import { setMaxListeners } from 'node:events';
import type { ApplySetRequest, ApplySetResult } from '../apply/apply-set-contract.js';
import { GitUnreachableError } from '../git/git-error.js';
import type { GitRef } from '../git/git-ref.js';
import type { GitAuth, GitSource } from '../git/git-source.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import type { ObjectRef } from '../manifests/object-ref.js';
import type { Logger } from '../observability/create-logger.js';
import { readGitAuth, type ApplySetApi } from './applyset-api.js';
import { refuseNestedApplySets } from '../api/refuse-nested-applysets.js';
import { impersonatedUser, parentOf } from './applyset-subject.js';
import { refusedImpersonation, serviceAccountNotFound } from './service-account-stall.js';
import {
  APPROVE_PRUNE_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type ApplySet,
  type ApplySetStatus,
  type ResolvedApplySetSpec,
  type ResolvedGitRef,
} from '../api/applyset-types.js';
import { failureOutcome } from './failure-outcome.js';
import { createHealthWaitStatus, type HealthWaitStatus } from './health-wait-status.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { outcomeOf } from './outcome-of.js';
import type { ReconcilerDeps } from './reconcile-applyset.js';

/** How steps 5-8 ended, and the ApplySet's resourceVersion after the engine's writes of it. */
export interface RunOutcome {
  readonly outcome: ReconcileOutcome;
  readonly parentResourceVersion?: string;
  /**
   * The run was of a revision and spec already applied in full: what it changed on the cluster was
   * drift (counted by the fight tracker), and driftMode Warn only reported it.
   */
  readonly steady?: boolean;
  /** The status the run wrote on its way (the health wait's Progressing), if it wrote one. */
  readonly storedStatus?: ApplySetStatus;
  /** What the set's inventory records after the engine ran (status.inventory); unset when it did not. */
  readonly held?: readonly ObjectRef[];
}

/** A step that ended the run early, or what it produced for the next. */
type Step<T> = { readonly done: ReconcileOutcome } | { readonly value: T };

/**
 * Steps 5-8 of a reconcile for a valid spec: an outcome, never a throw. `applySet` is the object as
 * the server last answered this reconcile; the engine takes it rather than GET it again.
 */
export async function fetchAndApply(
  deps: ReconcilerDeps,
  api: ApplySetApi,
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  log: Logger,
): Promise<RunOutcome> {
  const { namespace } = applySet.metadata;
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(spec.timeoutMs)]);
  // Every concurrent API request of the engine listens on this one signal: many listeners are expected.
  setMaxListeners(0, signal);

  // 5. The account the set is applied as must exist before anything is fetched or written: an
  // impersonated account that does not exist has no rights, and would fail object by object.
  const serviceAccount = spec.serviceAccountName ?? deps.defaultServiceAccountName;
  const missing = await missingServiceAccount(api, namespace, spec, serviceAccount, signal);
  if (missing !== undefined) return { outcome: missing };
  const user = impersonatedUser(namespace, serviceAccount);
  const auth = await readCredentials(deps, user, namespace, spec, signal);
  if ('done' in auth) return { outcome: auth.done };

  // 6. Fetch the ref into the shared cache. A reconcile on schedule takes a fetch of the same source
  // younger than its interval (another ApplySet's, on a fleet sharing one repository); one asked for
  // (a new spec, a reconcile request) goes to the network.
  const fetched = await fetchRevision(
    deps,
    spec,
    auth.value,
    { signal, log },
    onSchedule(applySet) ? spec.intervalMs : 0,
  );
  if ('done' in fetched) return { outcome: fetched.done };
  const { revision, commit } = fetched.value;
  log.debug({ revision, fetched: fetched.value.fetched }, 'fetched');

  // 7. Read the files under spec.source.path at that commit straight from the object store.
  const files = await readFiles(deps, spec, commit, revision, signal);
  if ('done' in files) return { outcome: files.done };

  // 8. Apply and prune, the ApplySet itself being the parent, as its ServiceAccount or the default one.
  // With spec.wait, the status says Progressing while the objects become healthy.
  const steady = appliedBefore(applySet, revision);
  const healthWait = spec.wait ? createHealthWaitStatus(deps, api, applySet, revision, log) : undefined;
  const request = engineRequest(
    applySet,
    spec,
    files.value,
    revision,
    steady,
    signal,
    deps.allowNestedApplySets === true,
  );
  let result: ApplySetResult;
  try {
    result = await deps.engineFor(user)(
      healthWait === undefined ? request : { ...request, onHealthWait: healthWait.onHealthWait },
    );
  } catch (error) {
    const refused = refusedImpersonation({ thrown: error }, namespace, serviceAccount, revision);
    const outcome =
      refused ?? failureOutcome(error, { step: 'apply', revision, timedOut: signal.aborted }, log);
    return { outcome, ...storedBy(healthWait) };
  }
  // The engine's writes of the ApplySet (as the controller) move it on even when the account was refused.
  const parentResourceVersion = healthWait?.written()?.resourceVersion ?? result.parentResourceVersion;
  const refused = refusedImpersonation({ result }, namespace, serviceAccount, revision);
  const moved = parentResourceVersion === undefined ? {} : { parentResourceVersion };
  if (refused !== undefined) return { outcome: refused, ...moved, ...storedBy(healthWait) };
  return {
    outcome: outcomeOf(result, revision),
    steady,
    ...(result.inventory === undefined ? {} : { held: result.inventory }),
    ...moved,
    ...storedBy(healthWait),
  };
}

/** The status the health wait wrote, which the run's final status is compared with. */
function storedBy(healthWait: HealthWaitStatus | undefined): Pick<RunOutcome, 'storedStatus'> {
  const written = healthWait?.written();
  return written === undefined ? {} : { storedStatus: written.status };
}

/** Stalled when the ServiceAccount to impersonate does not exist; undefined when it does, or none is. */
async function missingServiceAccount(
  api: ApplySetApi,
  namespace: string,
  spec: ResolvedApplySetSpec,
  serviceAccount: string | undefined,
  signal: AbortSignal,
): Promise<ReconcileOutcome | undefined> {
  if (serviceAccount === undefined || (await api.serviceAccountExists(namespace, serviceAccount, signal)))
    return undefined;
  const given = spec.serviceAccountName === undefined ? 'default' : 'spec.serviceAccountName';
  return serviceAccountNotFound(namespace, serviceAccount, given);
}

/** The manifests of the commit under spec.source.path, less what spec.source.ignore leaves out. */
async function readFiles(
  deps: ReconcilerDeps,
  spec: ResolvedApplySetSpec,
  commit: string,
  revision: string,
  signal: AbortSignal,
): Promise<Step<ManifestFile[]>> {
  let files: ManifestFile[];
  try {
    files = await deps.gitSource.readManifests(
      { url: spec.source.url, commit, path: spec.source.path },
      { signal },
    );
  } catch (error) {
    return { done: failureOutcome(error, { step: 'load', spec, revision }, deps.logger) };
  }
  // spec.source.ignore: gitignore patterns from the repository root; a left-out file is never read as
  // a manifest, so it can neither break the set nor add to it.
  return {
    value: excludeFiles(files, spec.source.ignore, (file) =>
      spec.source.path === '' ? file.path : `${spec.source.path}/${file.path}`,
    ).kept,
  };
}

/** What the engine is asked to do for this ApplySet at this revision. */
function engineRequest(
  applySet: ApplySet,
  spec: ResolvedApplySetSpec,
  files: ManifestFile[],
  revision: string,
  steady: boolean,
  signal: AbortSignal,
  allowNested: boolean,
): ApplySetRequest {
  const { namespace } = applySet.metadata;
  return {
    files,
    parent: parentOf(applySet),
    defaultNamespace: spec.targetNamespace ?? namespace,
    prune: spec.prune,
    ...(spec.pruneDryRun ? { pruneDryRun: true } : {}),
    // driftMode Warn holds back only drift: a new revision or spec is applied in full.
    drift: { correct: !(steady && spec.driftMode === 'Warn'), ignore: spec.driftIgnore },
    allowEmpty: spec.allowEmpty,
    force: spec.force,
    adopt: spec.adopt,
    dryRun: false,
    ...(spec.wait ? { wait: { timeoutMs: spec.timeoutMs, healthChecks: spec.healthChecks } } : {}),
    // No manifest creates or changes an ApplySet unless the operator granted nesting: an ApplySet
    // names its own ServiceAccount, so one would hand its repository a sibling's identity.
    ...(allowNested ? {} : { screenObjects: refuseNestedApplySets }),
    // A revision approved with applyset.dev/approve-prune prunes past the limit.
    ...(spec.pruneLimit === undefined ||
    applySet.metadata.annotations?.[APPROVE_PRUNE_ANNOTATION] === revision
      ? {}
      : { pruneLimit: spec.pruneLimit }),
    signal,
  };
}

/**
 * Whether `revision` and the current spec were already applied in full: Ready True for this
 * generation, at this revision. A change such a run makes to an object was made by someone else.
 */
function appliedBefore(applySet: ApplySet, revision: string): boolean {
  const ready = applySet.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    applySet.status?.lastAppliedRevision === revision &&
    ready?.status === 'True' &&
    ready.observedGeneration !== undefined &&
    ready.observedGeneration === applySet.metadata.generation
  );
}

/**
 * Whether this reconcile is the interval's: the spec it acts on was handled before and no reconcile
 * was requested since. A first reconcile, a changed spec or a request are not on schedule.
 */
function onSchedule(applySet: ApplySet): boolean {
  const requested = applySet.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  return (
    applySet.status?.observedGeneration !== undefined &&
    applySet.status.observedGeneration === applySet.metadata.generation &&
    (requested === undefined || requested === applySet.status.lastHandledReconcileAt)
  );
}

/**
 * Credentials from the Secret; they go to the Git source and nowhere else (never logged). The Secret
 * is read as `user`, the account the set is applied as (the controller only when it applies as
 * itself): an ApplySet author cannot make the controller read, and send to a host of their choosing,
 * a Secret their account may not get. A Secret of another namespace is read only from a namespace the
 * controller was told to trust (`--allow-secret-refs-from`).
 */
async function readCredentials(
  deps: ReconcilerDeps,
  user: string | undefined,
  namespace: string,
  spec: ResolvedApplySetSpec,
  signal: AbortSignal,
): Promise<Step<GitAuth | undefined>> {
  const { secretName } = spec.source;
  if (secretName === undefined) return { value: undefined };
  const secretNamespace = spec.source.secretNamespace ?? namespace;
  if (secretNamespace !== namespace && !deps.allowSecretRefsFrom.has(secretNamespace)) {
    const why = deps.noCrossNamespaceRefs
      ? 'the controller refuses every reference to another namespace (it runs without --allow-cross-namespace-refs)'
      : `the controller trusts no Secret of namespace ${secretNamespace} (--allow-secret-refs-from, chart tenancy.allowSecretRefsFrom)`;
    return {
      done: {
        kind: 'stalled',
        reason: 'CrossNamespaceRefRefused',
        message: `spec.source.secretRef names Secret ${secretNamespace}/${secretName} of another namespace, and ${why}; nothing was fetched or applied`,
      },
    };
  }
  const read = await readGitAuth(deps.readerAs(user), secretNamespace, secretName, signal);
  if (read.kind === 'found') return { value: read.auth };
  if (read.kind === 'forbidden') {
    const who =
      user === undefined ? 'the controller' : `the ApplySet's ServiceAccount ${serviceAccountOf(user)}`;
    return {
      done: {
        kind: 'stalled',
        reason: 'SecretNotReadable',
        message: `${who} may not get Secret ${secretNamespace}/${secretName} (spec.source.secretRef); grant it get on that Secret (a Role with resourceNames: [${secretName}]); nothing was fetched or applied`,
      },
    };
  }
  return {
    done: {
      kind: 'stalled',
      reason: 'SecretNotFound',
      message: `Secret ${secretNamespace}/${secretName} (spec.source.secretRef) ${read.problem}`,
    },
  };
}

async function fetchRevision(
  deps: ReconcilerDeps,
  spec: ResolvedApplySetSpec,
  auth: GitAuth | undefined,
  { signal, log }: { readonly signal: AbortSignal; readonly log: Logger },
  maxAgeMs: number,
): Promise<Step<Awaited<ReturnType<GitSource['fetch']>>>> {
  const started = deps.now();
  try {
    const fetched = await deps.gitSource.fetch(
      { url: spec.source.url, ref: gitRefOf(spec.source.ref), ...(auth === undefined ? {} : { auth }) },
      { signal, timeoutMs: spec.timeoutMs, maxAgeMs },
    );
    deps.metrics.observeGitFetch('success', (deps.now() - started) / 1000);
    return { value: fetched };
  } catch (error) {
    deps.metrics.observeGitFetch('failure', (deps.now() - started) / 1000);
    // The status says only "unreachable or not a Git repository" (no port scan through it); the
    // operator reads here what it was.
    if (error instanceof GitUnreachableError) log.warn({ detail: error.detail }, error.message);
    return { done: failureOutcome(error, { step: 'fetch', spec }, log) };
  }
}

/** `system:serviceaccount:team-a:deployer` → `team-a/deployer`, as a user names the account. */
function serviceAccountOf(user: string): string {
  const prefix = 'system:serviceaccount:';
  return user.startsWith(prefix) ? user.slice(prefix.length).replace(':', '/') : user;
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

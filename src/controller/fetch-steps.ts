/**
 * The reconcile's steps before the engine (steps 7 to 10 of reconcile-applyset.ts): the account the
 * set is applied as, its Git credentials, the fetch and the manifests. Each ends the run with an
 * outcome, or hands the next step its value; none throws.
 */
import type { ControllerMetrics } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import type { ApplySet, ResolvedApplySetSpec, ResolvedSourceRef } from '../api/applyset-types.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../api/applyset-types.js';
import type { ReconcileOutcome } from '../api/reconcile-outcome.js';
import { GitUnreachableError } from '../git/git-error.js';
import type { GitRef } from '../git/git-ref.js';
import type { FileTransform } from '../git/materialize-commit-tree.js';
import { readCommitManifests } from '../git/read-cached-manifests.js';
import type { GitAuth, GitSource } from '../git/git-source.js';
import type { KubeClient } from '../kube/kube-client.js';
import {
  buildCommitKustomization,
  kustomizationAt,
  kustomizeLabel,
  scheduledBuild,
} from '../kustomize/build-kustomization.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, type KustomizeOptions } from '../kustomize/run-kustomize.js';
import { excludeFiles } from '../manifests/exclude-files.js';
import type { ManifestFile } from '../manifests/parse-manifest-set.js';
import { readGitAuth, readSecret } from './applyset-api.js';
import { pullCredentialsOf, type CredentialsFor } from '../source/oci/pull-secret.js';
import { failureOutcome } from './failure-outcome.js';
import type { ReconcileContext, Tenancy } from './reconcile-context.js';
import { serviceAccountNotFound } from './service-account-stall.js';

/** A step that ended the run early, or what it produced for the next. */
export type Step<T> = { readonly done: ReconcileOutcome } | { readonly value: T };

/** Stalled when the ServiceAccount to impersonate does not exist; undefined when it does, or none is. */
export async function missingServiceAccount(
  ctx: Pick<ReconcileContext, 'api' | 'namespace'>,
  spec: ResolvedApplySetSpec,
  serviceAccount: string | undefined,
  signal: AbortSignal,
): Promise<ReconcileOutcome | undefined> {
  const { api, namespace } = ctx;
  if (serviceAccount === undefined || (await api.serviceAccountExists(namespace, serviceAccount, signal)))
    return undefined;
  const given = spec.serviceAccountName === undefined ? 'default' : 'spec.serviceAccountName';
  return serviceAccountNotFound(namespace, serviceAccount, given);
}

/** A Git source's credentials, or an OCI source's: the pull Secret's, host by host. */
export type SourceAuth = GitAuth | { readonly registry: CredentialsFor };

/**
 * Credentials from the Secret; they go to the source and nowhere else (never logged). The Secret
 * is read as `user`, the account the set is applied as (the controller only when it applies as
 * itself): an ApplySet author cannot make the controller read, and send to a host of their choosing,
 * a Secret their account may not get. A Secret of another namespace is read only from a namespace the
 * controller was told to trust (`--allow-secret-refs-from`).
 */
export async function readCredentials(
  reader: KubeClient,
  tenancy: Pick<Tenancy, 'allowSecretRefsFrom' | 'noCrossNamespaceRefs'>,
  { user, namespace }: { user: string | undefined; namespace: string },
  spec: ResolvedApplySetSpec,
  signal: AbortSignal,
): Promise<Step<SourceAuth | undefined>> {
  const { secretName } = spec.source;
  if (secretName === undefined) return { value: undefined };
  const secretNamespace = spec.source.secretNamespace ?? namespace;
  if (secretNamespace !== namespace && !tenancy.allowSecretRefsFrom.has(secretNamespace)) {
    const why = tenancy.noCrossNamespaceRefs
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
  const read =
    spec.source.kind === 'oci'
      ? await readPullCredentials(reader, secretNamespace, secretName, signal)
      : await readGitAuth(reader, secretNamespace, secretName, signal);
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

/** The ref fetched into the shared cache, a fetch younger than `maxAgeMs` taken as it is. */
export async function fetchRevision(
  ctx: Pick<ReconcileContext, 'now'> & {
    readonly log: Pick<Logger, 'warn' | 'error'>;
    readonly metrics: Pick<ControllerMetrics, 'observeGitFetch'>;
  },
  gitSource: GitSource,
  spec: ResolvedApplySetSpec,
  { auth, maxAgeMs }: { auth: SourceAuth | undefined; maxAgeMs: number },
  signal: AbortSignal,
): Promise<Step<Awaited<ReturnType<GitSource['fetch']>>>> {
  const started = ctx.now();
  try {
    const fetched = await gitSource.fetch(
      {
        url: spec.source.url,
        ref: gitRefOf(spec.source.ref),
        ...(auth === undefined || 'registry' in auth ? {} : { auth }),
      },
      { signal, timeoutMs: spec.timeoutMs, maxAgeMs },
    );
    ctx.metrics.observeGitFetch('success', (ctx.now() - started) / 1000);
    return { value: fetched };
  } catch (error) {
    ctx.metrics.observeGitFetch('failure', (ctx.now() - started) / 1000);
    // The status says only "unreachable or not a Git repository" (no port scan through it); the
    // operator reads here what it was.
    if (error instanceof GitUnreachableError) ctx.log.warn({ detail: error.detail }, error.message);
    return { done: failureOutcome(error, { step: 'fetch', spec }, ctx.log) };
  }
}

/** What a revision holds under a path: `kustomize build` of its kustomization, or its manifest files. */
type RevisionContent =
  | { readonly kind: 'kustomization'; readonly built: ManifestFile }
  | { readonly kind: 'manifests'; readonly files: ManifestFile[] };

/** How readFiles reaches a revision's files: a commit in the Git cache, or a preview's local checkout. */
export interface RevisionReader {
  /**
   * What `path` holds, in one pass: `kustomize build` of it (each file the build reads passed through
   * `transform` first, in memory-backed scratch when `inMemory`) when it holds a kustomization, else the
   * manifest files under it (a directory, read recursively, or one file).
   */
  read(
    path: string,
    build: { options: KustomizeOptions; signal: AbortSignal; transform?: FileTransform; inMemory?: boolean },
  ): Promise<RevisionContent>;
}

/**
 * A commit of the shared Git cache, as readFiles reads it: the commit is opened, and the repository's
 * read lock taken, once to see whether the path holds a kustomization (and to read its plain files if
 * not); a kustomization is then built once the build scheduler (`options.schedule`) lets it start,
 * its tree copied under a read lock of its own and built after the lock is released: neither a build
 * waiting for its turn nor one running holds a worker or the lock, which a fetch of the same
 * repository (maybe another tenant's) needs.
 */
export function commitReader(
  gitSource: Pick<GitSource, 'readCommitTree'>,
  { url, commit }: { url: string; commit: string },
): RevisionReader {
  return {
    read: async (path, build) => {
      const plain = await gitSource.readCommitTree(
        { url, commit },
        async (opened): Promise<RevisionContent | undefined> =>
          (await kustomizationAt(opened, path)) === undefined
            ? { kind: 'manifests', files: await readCommitManifests(opened, path, { signal: build.signal }) }
            : undefined,
        { signal: build.signal },
      );
      if (plain !== undefined) return plain;
      const built = await scheduledBuild(build, kustomizeLabel(path), (limits) =>
        buildCommitKustomization(
          (use) => gitSource.readCommitTree({ url, commit }, use, { signal: limits.signal }),
          {
            sourcePath: path,
            ...build,
            options: { ...build.options, timeoutMs: limits.timeoutMs },
            signal: limits.signal,
          },
        ),
      );
      return { kind: 'kustomization', built };
    },
  };
}

/**
 * The manifests of a revision under spec.source.path, less what spec.source.ignore leaves out; or, when
 * the path holds a kustomization, what `kustomize build` makes of it (docs/kustomize.md), as one file
 * named `kustomize build <path>` (ignore does not apply: kustomize reads what the kustomization lists).
 * The preview (src/preview/preview-applyset.ts) reads a local checkout through here too, so both read a
 * revision the same way.
 */
export async function readFiles(
  reader: RevisionReader,
  spec: ResolvedApplySetSpec,
  read: {
    revision: string;
    signal: AbortSignal;
    log: Pick<Logger, 'error'>;
    kustomize?: KustomizeOptions;
    transform?: FileTransform;
    inMemory?: boolean;
  },
): Promise<Step<ManifestFile[]>> {
  const { revision, signal, log, kustomize = DEFAULT_KUSTOMIZE_OPTIONS } = read;
  let content: RevisionContent;
  try {
    const build = {
      options: kustomize,
      signal,
      ...(read.transform === undefined ? {} : { transform: read.transform }),
      ...(read.inMemory === true ? { inMemory: true } : {}),
    };
    content = await reader.read(spec.source.path, build);
  } catch (error) {
    return { done: failureOutcome(error, { step: 'load', spec, revision }, log) };
  }
  if (content.kind === 'kustomization') return { value: [content.built] };
  // From here on a file is named from the repository root (`apps/prod/bad.yaml`, not `bad.yaml`), as
  // the user finds it in the repository: in every message, Event and status that names it.
  const fromRoot = (file: ManifestFile): ManifestFile =>
    spec.source.path === '' ? file : { ...file, path: `${spec.source.path}/${file.path}` };
  // spec.source.ignore: gitignore patterns from the repository root; a left-out file is never read as
  // a manifest, so it can neither break the set nor add to it.
  return { value: excludeFiles(content.files.map(fromRoot), spec.source.ignore, (file) => file.path).kept };
}

/** `system:serviceaccount:team-a:deployer` → `team-a/deployer`, as a user names the account. */
export function serviceAccountOf(user: string): string {
  const prefix = 'system:serviceaccount:';
  return user.startsWith(prefix) ? user.slice(prefix.length).replace(':', '/') : user;
}

function gitRefOf(ref: ResolvedSourceRef): GitRef {
  switch (ref.type) {
    case 'digest':
      // The resolver gives a digest to oci:// sources only, and those are never fetched as Git.
      throw new Error(`a Git source has no digest ref (${ref.digest})`);
    case 'semver':
      // The same: a semver range of tags is an oci:// source's alone.
      throw new Error(`a Git source has no semver ref (${ref.range})`);
    case 'branch':
      return { branch: ref.name };
    case 'tag':
      return { tag: ref.name };
    case 'commit':
      return { commit: ref.sha };
  }
}

/** The pull Secret of an OCI source, read as readGitAuth reads a Git one. */
async function readPullCredentials(
  reader: KubeClient,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<
  | { readonly kind: 'found'; readonly auth: SourceAuth }
  | { readonly kind: 'forbidden' }
  | { readonly kind: 'missing'; readonly problem: string }
> {
  const secret = await readSecret(reader, namespace, name, signal);
  if (secret.kind === 'missing') return { kind: 'missing', problem: 'does not exist' };
  if (secret.kind === 'forbidden') return secret;
  const read = pullCredentialsOf(secret.data, `Secret ${namespace}/${name}`);
  if ('problem' in read) return { kind: 'missing', problem: read.problem };
  return { kind: 'found', auth: { registry: read.credentialsFor } };
}

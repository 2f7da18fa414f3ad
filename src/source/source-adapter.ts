/**
 * The seam between a reconcile and where its manifests come from (docs/architecture.md, "The source
 * seam"). A source adapter turns a resolved spec.source into a revision: its name as the status shows
 * it, what identifies it (a commit, a manifest digest) and its tree. Everything after that (kustomize
 * builds, sops decryption, spec.source.ignore, decoding) is the same for every source type, and no
 * adapter's business: readSource (read-source.ts) does it.
 */
import type { FoundSecret } from '../kube/applyset-api.js';
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { Step } from '../api/reconcile-outcome.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { ControllerMetrics } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import type { RevisionReader } from './revision-reader.js';

/** Who reads the Secrets an ApplySet names: the account it is applied as, in its own namespace. */
export interface SetAccount {
  readonly reader: KubeClient;
  /** The impersonated user; undefined: the controller itself. */
  readonly user: string | undefined;
  readonly namespace: string;
}

/** What credentials a spec.source.secretRef Secret holds for this source type, or what it lacks. */
export type CredentialsParser<T> = (
  secret: FoundSecret,
  from: string,
) => { readonly credentials: T } | { readonly problem: string };

/** What an adapter is handed for one read of a source. */
export interface SourceRequest {
  readonly spec: ResolvedApplySetSpec;
  readonly account: SetAccount;
  /**
   * spec.source.secretRef's Secret, read as the account (and only from a namespace it may name), made
   * into credentials by `parse`: undefined when the spec names none; a stall when it is missing,
   * unreadable or holds none. Only an adapter that needs it reads it.
   */
  readonly credentials: <T>(parse: CredentialsParser<T>) => Promise<Step<T | undefined>>;
  /** A fetch of the same source younger than this is taken as it is (a reconcile on schedule). */
  readonly maxAgeMs: number;
  readonly log: Pick<Logger, 'debug' | 'warn' | 'error'>;
  readonly metrics: Pick<ControllerMetrics, 'observeGitFetch'>;
  readonly now: () => number;
}

/** One revision of a source, fetched and ready to read. */
export interface SourceRevision {
  /** `main@sha1:…`, `v1.2.0@sha256:…`: as the status shows it. */
  readonly revision: string;
  /** What the revision is, whatever its name: a commit, a manifest digest. */
  readonly id: string;
  readonly tree: RevisionReader;
}

/**
 * A source type. `read` ends in a revision or in the outcome that stops the run (a stall, a failure
 * naming what went wrong); it never throws but an abort.
 */
export interface SourceAdapter {
  read(request: SourceRequest, signal: AbortSignal): Promise<Step<SourceRevision>>;
}

/** The adapters of a controller (or a preview, or the CLI), by spec.source.kind. */
export type SourceAdapters = Readonly<Partial<Record<ResolvedApplySetSpec['source']['kind'], SourceAdapter>>>;

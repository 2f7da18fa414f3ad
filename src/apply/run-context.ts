import type { ObjectHealthJudge } from '../health/cel-health.js';
import type { MemberMetadata } from '../inventory/applyset-metadata.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KubeObjectApi } from '../kube/kube-object-api.js';
import type { OpenApiDocumentStore } from '../kube/openapi-disk-cache.js';
import type { PatchMetaSource } from '../kube/openapi-patch-meta-source.js';
import type { RestMapper } from '../kube/rest-mapper.js';
import type { PlanStep } from '../plan/plan.js';
import type { NoOpMemo } from './remember-no-op.js';
import type { WritePolicy } from './apply-set-contract.js';

/** The subset of a pino logger the engine uses. */
interface EngineLogger {
  debug(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ApplySetEngineOptions {
  readonly kubeClient: KubeClient;
  /**
   * The client the apply-config object (the parent) is read and written with; default `kubeClient`.
   * The controller gives its own identity here while `kubeClient` impersonates the ApplySet's account:
   * the account then needs no rights on ApplySets, so a set's manifests cannot rewrite a sibling
   * ApplySet (docs/multi-tenancy.md). Every child is still written, read and deleted as `kubeClient`.
   */
  readonly parentKubeClient?: KubeClient;
  readonly logger?: EngineLogger;
  /** Objects of one wave applied at once (and reads in flight); default 16. */
  readonly concurrency?: number;
  /** The KEP-3659 `tooling` value written on the parent. */
  readonly tooling?: string;
  /** How long to wait for the set's CRDs to be Established; default 60 s. */
  readonly crdEstablishedTimeoutMs?: number;
  /**
   * How old discovery's answer lacking a kind must be before an unknown kind asks the server again
   * (at most once per run); default 10 s.
   */
  readonly discoveryRecheckMs?: number;
  /** How long `--force` waits for a deleted object to be gone before recreating it; default 60 s. */
  readonly forceDeleteTimeoutMs?: number;
  /**
   * Called after each step of the plan has run. Tests throw from it to simulate a crash between two
   * steps of the proposal's sequence; the error propagates out of the engine.
   */
  readonly afterStep?: (step: PlanStep, index: number) => void | Promise<void>;
  /**
   * Where patch strategies and merge keys come from; default: the server's OpenAPI (v3, else v2),
   * read once per group-version, falling back to the compiled-in table, as kubectl does.
   */
  readonly patchMetaSource?: PatchMetaSource;
  /** Where the default patch-metadata source keeps OpenAPI documents between runs (the command's). */
  readonly openApiStore?: OpenApiDocumentStore;
  /**
   * Discovery to use instead of the engine's own: the controller shares one mapper between the
   * engines of every identity (discovery does not depend on who asks, see createRestMapper).
   */
  readonly restMapper?: RestMapper;
  /** The memo of patches the server ignored; default: the engine's own, kept as long as the engine. */
  readonly serverNoOps?: NoOpMemo;
}

/**
 * What the engine builds once and every run works through: the object APIs, discovery, patch
 * metadata and the memo of ignored patches. Steps take the part they use (a `Pick` of `RunContext`),
 * never the whole.
 */
interface RunAdapters {
  readonly api: KubeObjectApi;
  /** The parent's reads and writes: `parentKubeClient`'s, else the same as `api`. */
  readonly parentApi: KubeObjectApi;
  /**
   * Per object of every run of this engine: the (resourceVersion, patch) the server last answered
   * without a change. The same patch on the same version is not sent again.
   */
  readonly serverNoOps: NoOpMemo;
  readonly mapper: RestMapper;
  readonly patchMeta: PatchMetaSource;
  readonly concurrency: number;
  readonly tooling: string;
}

/**
 * What the steps of one run may use: the adapters, plus the few engine options read while running
 * (the others only shape the adapters, in createApplySetEngine).
 */
export type RunContext = RunAdapters &
  Pick<
    ApplySetEngineOptions,
    'kubeClient' | 'logger' | 'afterStep' | 'crdEstablishedTimeoutMs' | 'forceDeleteTimeoutMs'
  > & {
    /** The request's health judge (ApplySetRequest.healthOf); undefined: kstatus's rules. */
    readonly healthOf?: ObjectHealthJudge;
  };

/** Whom one object of the set is written for, known once the parent's uid is. */
interface ObjectScope {
  readonly write: WritePolicy;
  readonly signal: AbortSignal | undefined;
  readonly ownerUid: string;
  readonly member: MemberMetadata;
  /** The other set's apply-config object by uid, for conflict messages. */
  readonly findSetParent: (uid: string) => Promise<string | undefined>;
}

/** What applying one object of the set uses: its scope and the adapters it reads and writes through. */
export type ObjectContext = ObjectScope &
  Pick<RunContext, 'api' | 'mapper' | 'patchMeta' | 'serverNoOps' | 'forceDeleteTimeoutMs'>;

import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ApplySetEngine } from '../apply/apply-set-contract.js';
import { createApplySetEngine, type ApplySetEngineOptions } from '../apply/create-apply-set-engine.js';
import { createGitSource } from '../git/git-source.js';
import type { SourceHostList } from '../git/source-host-list.js';
import { startProbeServer } from '../http/start-probe-server.js';
import { createKubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonObject } from '../manifests/json-value.js';
import { createControllerMetrics } from '../observability/controller-metrics.js';
import type { Logger } from '../observability/create-logger.js';
import {
  APPLYSET_GROUP,
  APPLYSET_PLURAL,
  APPLYSET_VERSION,
  APPROVE_PRUNE_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
} from '../api/applyset-types.js';
import { readSecretVersion } from './applyset-api.js';
import { createEventRecorder } from './event-recorder.js';
import { LeadershipLostError, startLeaderElection, type LeaderElection } from './leader-election.js';
import { createReconciler } from './reconcile-applyset.js';
import { startSecretChangePoller, type SecretReference } from './secret-change-poller.js';
import { servePushWebhook } from './serve-push-webhook.js';
import { startSupervisedInformer, type InformerEvent } from './supervised-informer.js';
import { createWorkQueue } from './work-queue.js';

export interface ControllerConfig {
  readonly kubeConfig: KubeConfig;
  /** ApplySets reconciled at once. */
  readonly concurrency: number;
  /** `:8080`; `:0` picks a free port. */
  readonly metricsAddress: string;
  readonly leaderElect: boolean;
  /** Watch this namespace only; undefined watches all. */
  readonly namespace: string | undefined;
  readonly gitCacheDir: string;
  /** POD_NAME, else hostname and pid. */
  readonly identity: string;
  /** Where the Lease lives: POD_NAMESPACE, else --namespace, else default. */
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** How long in-flight reconciles may run after a shutdown request before they are aborted. */
  readonly shutdownGraceMs: number;
  readonly watchStallTimeoutMs?: number;
  /** Hosts a source URL may name (`--allowed-source-hosts`); empty: any. */
  readonly allowedSourceHosts?: SourceHostList;
  /** Refuse Git credentials Secrets without `applyset.dev/source-hosts` (`--require-secret-source-hosts`). */
  readonly requireSecretSourceHosts?: boolean;
  /**
   * `--default-service-account`: an ApplySet without spec.serviceAccountName is applied as this
   * ServiceAccount of its own namespace, never as the controller.
   */
  readonly defaultServiceAccountName?: string;
  /**
   * `--allow-secret-refs-from`: namespaces whose Secrets an ApplySet of another namespace may name as its
   * Git credentials. Empty or absent: none (a secretRef is read in the ApplySet's own namespace only).
   */
  readonly allowSecretRefsFrom?: readonly string[];
  /** `--no-cross-namespace-refs`: every reference stays in the ApplySet's namespace (no allow list). */
  readonly noCrossNamespaceRefs?: boolean;
  /** `--webhook-addr`: serve push webhooks there; with `webhookSecret`. */
  readonly webhookAddress?: string;
  /** `--webhook-secret NAMESPACE/NAME`: the receivers (key) and their secrets (value). */
  readonly webhookSecret?: string;
  /** How often the Secrets of ApplySets that are not Ready are checked for a change. Default 5 s. */
  readonly secretPollIntervalMs?: number;
  /**
   * Called by the engine after each step of a plan; the split-brain fault test pauses the process
   * there (SIGSTOP) to play a leader frozen mid-reconcile. Not settable from the command line.
   */
  readonly afterEngineStep?: ApplySetEngineOptions['afterStep'];
}

export interface RunningController {
  /** Stop taking work, finish in-flight reconciles, release the Lease, close the HTTP server. */
  stop(): Promise<void>;
  /** Resolves with why the controller ended: asked to stop, or it lost the leadership. */
  readonly done: Promise<'stopped' | 'lost-leadership'>;
  readonly port: number;
}

export function defaultIdentity(env: Readonly<Record<string, string | undefined>>): string {
  const pod = env['POD_NAME'];
  return pod !== undefined && pod !== '' ? pod : `${hostname()}-${process.pid}`;
}

/**
 * The controller's shell, wired: the ApplySet informer and the poller of their Secrets feed the work
 * queue, the queue runs the reconciler once this replica leads, the HTTP server reports health,
 * readiness and metrics. Every replica keeps its informers warm, so a new leader starts at once and a non-leader is
 * ready too.
 */
export async function runController(config: ControllerConfig, logger: Logger): Promise<RunningController> {
  const stopping = new AbortController();
  const hardStop = new AbortController();
  // Every reconcile's deadline signal listens to these two; there may be many at once.
  setMaxListeners(0, stopping.signal, hardStop.signal);
  const metrics = createControllerMetrics();
  const countRequest = (method: string) => metrics.countKubeRequest(method);
  let election: LeaderElection | undefined;
  // With leader election, every write of this replica (children, inventory, status, events) must
  // prove in the same tick that the Lease is still ours; only the Lease's own requests are exempt.
  const writeFence = config.leaderElect
    ? () => {
        if (election === undefined) throw new LeadershipLostError();
        election.assertLeading();
      }
    : undefined;
  const fenced = writeFence === undefined ? {} : { writeFence };
  const client = createKubeClient({ onRequest: countRequest, kubeConfig: config.kubeConfig, ...fenced });
  // In-flight requests end the moment the leadership is lost, not after the shutdown grace period.
  const lostLeadership = new AbortController();
  const reconcileSignal = AbortSignal.any([hardStop.signal, lostLeadership.signal]);
  setMaxListeners(0, reconcileSignal);
  const engines = new Map<string, ApplySetEngine>();
  const engineFor = (user: string | undefined): ApplySetEngine => {
    const key = user ?? '';
    let engine = engines.get(key);
    if (engine === undefined) {
      engine = createApplySetEngine({
        kubeClient: createKubeClient({
          onRequest: countRequest,
          kubeConfig: config.kubeConfig,
          ...(user === undefined ? {} : { impersonateUser: user }),
          ...fenced,
        }),
        logger: logger.child({ engine: key === '' ? 'controller' : key }),
        ...(config.afterEngineStep === undefined ? {} : { afterStep: config.afterEngineStep }),
      });
      engines.set(key, engine);
    }
    return engine;
  };
  const secretRefNamespaces: ReadonlySet<string> = new Set(
    config.noCrossNamespaceRefs === true ? [] : (config.allowSecretRefsFrom ?? []),
  );
  const reconcile = createReconciler({
    client,
    engineFor,
    defaultServiceAccountName: config.defaultServiceAccountName,
    allowSecretRefsFrom: secretRefNamespaces,
    noCrossNamespaceRefs: config.noCrossNamespaceRefs === true,
    gitSource: createGitSource({
      cacheDir: config.gitCacheDir,
      allowedHosts: config.allowedSourceHosts ?? [],
      requireCredentialHosts: config.requireSecretSourceHosts === true,
    }),
    recordEvent: createEventRecorder({
      client,
      instance: config.identity,
      onError: (error) => logger.debug({ err: error }, 'recording an event failed'),
    }),
    metrics,
    logger,
    now: Date.now,
    signal: reconcileSignal,
  });
  const queue = createWorkQueue({
    concurrency: config.concurrency,
    process: async (key) => {
      await secretPoller.beforeReconcile(
        key,
        AbortSignal.any([reconcileSignal, AbortSignal.timeout(10_000)]),
      );
      return reconcile(key);
    },
    onError: (key, error) => logger.error({ applyset: key, err: error }, 'reconcile failed; backing off'),
  });
  metrics.setQueueDepthSource(() => queue.depth());

  const scope = config.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(config.namespace)}`;
  const informerBase = {
    client,
    signal: stopping.signal,
    ...(config.watchStallTimeoutMs === undefined ? {} : { stallTimeoutMs: config.watchStallTimeoutMs }),
  };
  const applySets = startSupervisedInformer({
    ...informerBase,
    path: `/apis/${APPLYSET_GROUP}/${APPLYSET_VERSION}${scope}/${APPLYSET_PLURAL}`,
    logger: logger.child({ informer: 'applysets' }),
    onEvent: (event) => {
      const key = keyOf(event.object);
      if (event.type === 'deleted') {
        queue.forget(key);
        secretPoller.forget(key);
      } else if (needsReconcile(event)) queue.add(key);
    },
  });
  // No list or watch of Secrets (the controller may only get them): a fixed credential is noticed by
  // polling the Secrets of the ApplySets that are not Ready.
  const secretPoller = startSecretChangePoller({
    readVersion: (namespace, name, signal) => readSecretVersion(client, namespace, name, signal),
    secretOf: (key) => {
      const applySet = applySets.list().find((object) => keyOf(object) === key);
      return applySet === undefined ? undefined : secretReferenceOf(applySet, secretRefNamespaces);
    },
    failing: () =>
      applySets
        .list()
        .filter((applySet) => !isReady(applySet))
        .map((applySet) => secretReferenceOf(applySet, secretRefNamespaces))
        .filter((reference) => reference !== undefined),
    onChange: (key) => queue.add(key),
    intervalMs: config.secretPollIntervalMs ?? 5_000,
    signal: stopping.signal,
    logger: logger.child({ poller: 'secrets' }),
  });

  let resolveDone!: (why: 'stopped' | 'lost-leadership') => void;
  const done = new Promise<'stopped' | 'lost-leadership'>((resolve) => {
    resolveDone = resolve;
  });
  let stopped: Promise<void> | undefined;

  const server = await startProbeServer({
    address: config.metricsAddress,
    isHealthy: () => !stopping.signal.aborted,
    isReady: () => applySets.hasSynced() && !stopping.signal.aborted,
    registry: metrics.registry,
  });
  const webhook =
    config.webhookAddress === undefined || config.webhookSecret === undefined
      ? undefined
      : await servePushWebhook({
          address: config.webhookAddress,
          secret: config.webhookSecret,
          client: createKubeClient({ onRequest: countRequest, kubeConfig: config.kubeConfig }),
          applySets: () => applySets.list(),
          now: () => new Date(),
          logger: logger.child({ server: 'webhook' }),
        });
  logger.info(
    {
      port: server.port,
      ...(webhook === undefined ? {} : { webhookPort: webhook.port }),
      identity: config.identity,
      namespace: config.namespace ?? '(all)',
    },
    'controller started',
  );

  const stop = (why: 'stopped' | 'lost-leadership'): Promise<void> => {
    stopped ??= (async () => {
      logger.info({ why }, 'stopping: finishing in-flight reconciles');
      stopping.abort();
      const grace = setTimeout(
        () => hardStop.abort(new Error('shutdown grace period over')),
        config.shutdownGraceMs,
      );
      try {
        await queue.shutdown();
      } finally {
        clearTimeout(grace);
      }
      await Promise.all([applySets.done, secretPoller.done]);
      if (why === 'stopped') await election?.release();
      await Promise.all([server.close(), webhook?.close()]);
      logger.info({}, 'stopped');
      resolveDone(why);
    })();
    return stopped;
  };

  const lead = () => {
    void applySets.synced.then(() => {
      if (!stopping.signal.aborted) queue.start();
    });
  };
  if (config.leaderElect) {
    election = startLeaderElection(
      {
        client: createKubeClient({ onRequest: countRequest, kubeConfig: config.kubeConfig }),
        namespace: config.leaseNamespace,
        name: config.leaseName,
        identity: config.identity,
        leaseDurationMs: config.leaseDurationMs,
        renewDeadlineMs: config.renewDeadlineMs,
        retryPeriodMs: config.retryPeriodMs,
        logger,
      },
      {
        onStartedLeading: lead,
        onStoppedLeading: () => {
          lostLeadership.abort(new LeadershipLostError());
          void stop('lost-leadership');
        },
      },
    );
  } else {
    lead();
  }

  return { stop: () => stop('stopped'), done, port: server.port };
}

/**
 * Flux's predicates: a new object, a new generation (a spec change), a deletion starting, or a new
 * value of the reconcile-requested-at annotation. Our own writes (status, finalizer, inventory
 * annotations) change none of these, so they do not loop back into the queue.
 */
export function needsReconcile(event: InformerEvent): boolean {
  if (event.type !== 'modified' || event.previous === undefined) return true;
  const before = metadataOf(event.previous);
  const after = metadataOf(event.object);
  const annotation = (m: JsonObject, key: string) => {
    const annotations = m['annotations'];
    return isJsonObject(annotations) ? annotations[key] : undefined;
  };
  // A request to reconcile, or an approval to prune past the limit, is acted on at once.
  const asked = (key: string) => annotation(before, key) !== annotation(after, key);
  return (
    before['generation'] !== after['generation'] ||
    (before['deletionTimestamp'] === undefined && after['deletionTimestamp'] !== undefined) ||
    asked(RECONCILE_REQUESTED_AT_ANNOTATION) ||
    asked(APPROVE_PRUNE_ANNOTATION)
  );
}

function metadataOf(object: JsonObject): JsonObject {
  const metadata = object['metadata'];
  return isJsonObject(metadata) ? metadata : {};
}

function keyOf(object: JsonObject): string {
  const metadata = metadataOf(object);
  return `${String(metadata['namespace'] ?? '')}/${String(metadata['name'])}`;
}

/**
 * The ApplySet's Secret, unless it names none, is suspended or is being deleted (nothing to fetch), or
 * lives in another namespace the controller does not trust (the reconcile refuses it; never polled).
 */
function secretReferenceOf(
  applySet: JsonObject,
  trustedNamespaces: ReadonlySet<string>,
): SecretReference | undefined {
  const ref = secretRefOf(applySet);
  const spec = applySet['spec'];
  if (ref === undefined || (isJsonObject(spec) && spec['suspend'] === true)) return undefined;
  const metadata = metadataOf(applySet);
  if (metadata['deletionTimestamp'] !== undefined) return undefined;
  const ownNamespace = String(metadata['namespace'] ?? '');
  const namespace = ref.namespace ?? ownNamespace;
  if (namespace !== ownNamespace && !trustedNamespaces.has(namespace)) return undefined;
  return { key: keyOf(applySet), namespace, secretName: ref.name };
}

function isReady(applySet: JsonObject): boolean {
  const status = applySet['status'];
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  return (
    Array.isArray(conditions) &&
    conditions.some((c) => isJsonObject(c) && c['type'] === 'Ready' && c['status'] === 'True')
  );
}

function secretRefOf(object: JsonObject): { name: string; namespace?: string } | undefined {
  const spec = object['spec'];
  const source = isJsonObject(spec) ? spec['source'] : undefined;
  const ref = isJsonObject(source) ? source['secretRef'] : undefined;
  if (!isJsonObject(ref) || typeof ref['name'] !== 'string') return undefined;
  return typeof ref['namespace'] === 'string'
    ? { name: ref['name'], namespace: ref['namespace'] }
    : { name: ref['name'] };
}

import { memberWatchesOf, type MemberWatches } from '../member-watches.js';
import { controllerSignals, type ControllerSignals } from './controller-signals.js';
import { APPLYSET_GROUP, APPLYSET_PLURAL, APPLYSET_VERSION } from '../../api/applyset-types.js';
import { startProbeServer, type ProbeServer } from '../../http/start-probe-server.js';
import type { WebhookServer } from '../../http/start-webhook-server.js';
import { createControllerMetrics, type ControllerMetrics } from '../../observability/controller-metrics.js';
import type { Logger } from '../../observability/create-logger.js';
import { readSecretVersion } from '../../kube/applyset-api.js';
import { createRestMapper } from '../../kube/rest-mapper.js';
import { controllerBuilds } from './controller-builds.js';
import { controllerSources } from './controller-sources.js';
import type { ControllerConfig, RunningController } from './controller-config.js';
import { controllerClients, type ControllerClients } from './controller-clients.js';
import { createEventRecorder } from '../event-recorder.js';
import type { Notifier } from '../../notify/notifier.js';
import { informerView, informerViewWithInventory } from './informer-view.js';
import { LeadershipLostError, startLeaderElection, type LeaderElection } from './leader-election.js';
import type { EngineHooks } from './shared-engines.js';
import { createReconciler, type Reconciler } from '../reconcile-applyset.js';
import { tracedReconciler } from '../traced-reconciler.js';
import { startSecretChangePoller, type SecretChangePoller } from './secret-change-poller.js';
import { servePushWebhook } from './serve-push-webhook.js';
import { changeOf, createUiChangeFeed, serveUi, type UiChangeFeed, type UiServing } from './serve-ui.js';
import { startSupervisedInformer, type SupervisedInformer } from '../../kube/supervised-informer.js';
import { watchedControllerNotifications } from './watched-notifications.js';
import { reconcilerApplySetApi, type InformedApplySetApi } from './informed-applyset-reads.js';
import { createDependentsIndex } from './dependents-index.js';
import { applySetKey, needsReconcile, pollsSecrets, secretReferences } from './watched-applyset.js';
import { createWorkQueue, type WorkQueue } from './work-queue.js';

type StopReason = 'stopped' | 'lost-leadership';

/**
 * The controller's shell, wired: the ApplySet informer and the poller of their Secrets feed the work
 * queue, the queue runs the reconciler once this replica leads, the HTTP server reports health,
 * readiness and metrics. Every replica keeps its informers warm, so a new leader starts at once and a non-leader is
 * ready too.
 */
export async function runController(
  config: ControllerConfig,
  logger: Logger,
  hooks: EngineHooks = {},
): Promise<RunningController> {
  const signals = controllerSignals();
  const metrics = createControllerMetrics();
  const leadership: { election?: LeaderElection } = {};
  const clients = controllerClients({
    config,
    logger,
    countRequest: (method, path, server) => metrics.countKubeRequest(method, path, server),
    leadership,
    hooks,
  });
  const secretRefNamespaces: ReadonlySet<string> = new Set(
    config.noCrossNamespaceRefs === true ? [] : (config.allowSecretRefsFrom ?? []),
  );
  // On a connection of their own (watcherAs), closed when the controller stops or loses its lead.
  const memberWatches = memberWatchesOf(config.memberWatches, {
    watcherAs: clients.watcherAs,
    logger: logger.child({ informer: 'members' }),
    signal: AbortSignal.any([signals.reconcile, signals.stopping.signal]),
  });
  if (memberWatches !== undefined) metrics.setMemberWatchesSource(() => memberWatches.size());
  const wired = wireReconciler(
    config,
    logger,
    clients,
    metrics,
    signals.reconcile,
    secretRefNamespaces,
    memberWatches,
  );
  const work = startWork(config, logger, clients, wired, signals, secretRefNamespaces, metrics);
  metrics.setQueueDepthSource(() => work.queue.depth());

  let resolveDone!: (why: StopReason) => void;
  const done = new Promise<StopReason>((resolve) => {
    resolveDone = resolve;
  });
  const servers = await startServers(config, logger, clients, metrics, work, signals.stopping.signal);
  let stopped: Promise<void> | undefined;
  const stop = (why: StopReason): Promise<void> => {
    stopped ??= shutDown(why, config, logger, signals, work, servers, leadership.election).then(() =>
      resolveDone(why),
    );
    return stopped;
  };

  const lead = () => {
    metrics.setLeader(true);
    void work.applySets.synced.then(() => {
      if (!signals.stopping.signal.aborted) work.queue.start();
    });
  };
  if (config.leaderElect) {
    leadership.election = startLeaderElection(
      {
        client: clients.unfenced(),
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
          metrics.setLeader(false);
          signals.lostLeadership.abort(new LeadershipLostError());
          void stop('lost-leadership');
        },
      },
    );
  } else {
    lead();
  }

  return { stop: () => stop('stopped'), done, port: servers.probe.port };
}

function wireReconciler(
  config: ControllerConfig,
  logger: Logger,
  clients: ControllerClients,
  metrics: ControllerMetrics,
  signal: AbortSignal,
  secretRefNamespaces: ReadonlySet<string>,
  memberWatches: MemberWatches | undefined,
): { readonly reconcile: Reconciler; readonly notify: Notifier; readonly api: InformedApplySetApi } {
  const { client } = clients;
  const notify = watchedControllerNotifications({ config, clients, metrics, logger, signal });
  const api = reconcilerApplySetApi({ client, config, logger, signal });
  const reconcile = tracedReconciler(
    config.tracer,
    createReconciler({
      client,
      api,
      builds: controllerBuilds(config, metrics),
      engineFor: clients.engineFor,
      readerAs: clients.readerAs,
      restMapper: createRestMapper(client),
      remoteClusters: clients.remoteClusters,
      capabilities: clients.capabilities,
      tenancy: {
        allowNestedApplySets: config.allowNestedApplySets === true,
        defaultServiceAccountName: config.defaultServiceAccountName,
        allowSecretRefsFrom: secretRefNamespaces,
        noCrossNamespaceRefs: config.noCrossNamespaceRefs === true,
      },
      sources: controllerSources(config),
      ...(config.healthCheckExprs === undefined ? {} : { healthCheckExprs: config.healthCheckExprs }),
      ...(config.kustomize === undefined ? {} : { kustomize: config.kustomize }),
      ...(config.sharedFetchMaxAgeMs === undefined
        ? {}
        : { sharedFetchMaxAgeMs: config.sharedFetchMaxAgeMs }),
      ...(memberWatches === undefined ? {} : { memberWatches }),
      recordEvent: createEventRecorder({
        client,
        instance: config.identity,
        onError: (error) => logger.debug({ err: error }, 'recording an event failed'),
      }),
      notify,
      metrics,
      logger,
      now: Date.now,
      signal,
    }),
  );
  return { reconcile, notify, api };
}

interface ControllerWork {
  readonly queue: WorkQueue;
  readonly applySets: SupervisedInformer;
  readonly secretPoller: SecretChangePoller;
  /** With the web view on: the changes its open pages are told about. */
  readonly uiChanges: UiChangeFeed | undefined;
}

/** The informer on ApplySets and the poller of their Secrets, feeding the work queue. */
function startWork(
  config: ControllerConfig,
  logger: Logger,
  clients: Pick<ControllerClients, 'client' | 'readerAs'>,
  // The notifications also hear of a deleted ApplySet, which no reconcile runs for.
  { reconcile, notify, api }: ReturnType<typeof wireReconciler>,
  signals: ControllerSignals,
  secretRefNamespaces: ReadonlySet<string>,
  metrics: ControllerMetrics,
): ControllerWork {
  const uiChanges = config.uiAddress === undefined ? undefined : createUiChangeFeed();
  const { client, readerAs } = clients;
  const queue = createWorkQueue({
    concurrency: config.concurrency,
    process: async (key, worker) => {
      await secretPoller.beforeReconcile(key, () =>
        AbortSignal.any([signals.reconcile, AbortSignal.timeout(10_000)]),
      );
      return reconcile(key, worker);
    },
    onError: (key, error) => logger.error({ applyset: key, err: error }, 'reconcile failed; backing off'),
  });
  const scope = config.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(config.namespace)}`;
  const dependents = createDependentsIndex();
  // The keys of the ApplySets whose Secrets the poller reads (not Ready, or being deleted), kept from
  // the informer's events: a scan of the fleet every poll was a share of a 10,000-set fleet's CPU at rest.
  const polled = new Set<string>();
  const applySets = startSupervisedInformer({
    client,
    signal: signals.stopping.signal,
    ...(config.watchStallTimeoutMs === undefined ? {} : { stallTimeoutMs: config.watchStallTimeoutMs }),
    path: `/apis/${APPLYSET_GROUP}/${APPLYSET_VERSION}${scope}/${APPLYSET_PLURAL}`,
    // A shard sees only its ApplySets; one relabelled away is reported deleted and forgotten here.
    ...(config.watchLabelSelector === undefined ? {} : { labelSelector: config.watchLabelSelector }),
    logger: logger.child({ informer: 'applysets' }),
    // The web view's ApplySet page lists the set's objects from status.inventory, dropped otherwise.
    transform: uiChanges === undefined ? informerView : informerViewWithInventory,
    onEvent: (event) => {
      uiChanges?.notify(changeOf(event.object));
      const key = applySetKey(event.object);
      if (event.type !== 'deleted' && pollsSecrets(event.object)) polled.add(key);
      else polled.delete(key);
      if (event.type === 'deleted') {
        queue.forget(key);
        secretPoller.forget(key);
        api.forget(key);
        // Its series go with it: no reconcile runs for a deleted ApplySet to remove them.
        const [namespace = '', name = ''] = key.split('/');
        metrics.setReady(namespace, name, undefined);
        notify.forget(namespace, name);
      } else if (needsReconcile(event)) queue.add(key);
      // spec.dependsOn: those waiting for this ApplySet look again when its readiness changes.
      for (const dependent of dependents.dependentsToWake(event)) queue.add(dependent);
    },
  });
  // Step 1 reads a small ApplySet from this informer's copy (informed-applyset-reads.ts).
  api.readFrom(applySets);
  // No list or watch of Secrets (we may only get them): poll those of the ApplySets not Ready.
  const referenceOf = secretReferences(secretRefNamespaces, config.defaultServiceAccountName);
  const secretPoller = startSecretChangePoller({
    readVersion: (namespace, name, signal, user) =>
      readSecretVersion(readerAs(user), namespace, name, signal),
    secretOf: (key) => {
      const applySet = applySets.get(key);
      return applySet === undefined ? undefined : referenceOf(applySet);
    },
    failing: () =>
      [...polled]
        .map((key) => applySets.get(key))
        .filter((applySet) => applySet !== undefined)
        .map(referenceOf)
        .filter((reference) => reference !== undefined),
    onChange: (key) => queue.add(key),
    intervalMs: config.secretPollIntervalMs ?? 5_000,
    signal: signals.stopping.signal,
    logger: logger.child({ poller: 'secrets' }),
  });
  return { queue, applySets, secretPoller, uiChanges };
}

interface ControllerServers {
  readonly probe: ProbeServer;
  readonly webhook: WebhookServer | undefined;
  readonly ui: UiServing | undefined;
}

/**
 * The probe and metrics server, the push webhook when its address and Secret are given, the web view
 * when its address is.
 */
async function startServers(
  config: ControllerConfig,
  logger: Logger,
  clients: ControllerClients,
  metrics: ControllerMetrics,
  { applySets, uiChanges }: Pick<ControllerWork, 'applySets' | 'uiChanges'>,
  stopping: AbortSignal,
): Promise<ControllerServers> {
  const probe = await startProbeServer({
    address: config.metricsAddress,
    isHealthy: () => !stopping.aborted,
    isReady: () => applySets.hasSynced() && !stopping.aborted,
    registry: metrics.registry,
  });
  const webhook =
    config.webhookAddress === undefined || config.webhookSecret === undefined
      ? undefined
      : await servePushWebhook({
          address: config.webhookAddress,
          secret: config.webhookSecret,
          client: clients.unfenced(),
          applySets: () => applySets.list(),
          now: () => new Date(),
          logger: logger.child({ server: 'webhook' }),
        });
  // Every replica serves the view from its own informer, the leader or not.
  const ui =
    uiChanges === undefined
      ? undefined
      : await serveUi({ config, clients, applySets, changes: uiChanges, logger, signal: stopping });
  logger.info(
    {
      port: probe.port,
      ...(webhook === undefined ? {} : { webhookPort: webhook.port }),
      ...(ui === undefined ? {} : { uiPort: ui.port }),
      identity: config.identity,
      namespace: config.namespace ?? '(all)',
      ...(config.watchLabelSelector === undefined ? {} : { watchLabelSelector: config.watchLabelSelector }),
    },
    'controller started',
  );
  return { probe, webhook, ui };
}

/**
 * Stop taking work and let in-flight reconciles finish within the grace period, then abort them; stop
 * the informer and the poller, release the Lease unless it was lost, close the servers.
 */
async function shutDown(
  why: StopReason,
  config: ControllerConfig,
  logger: Logger,
  signals: ControllerSignals,
  work: ControllerWork,
  servers: ControllerServers,
  election: LeaderElection | undefined,
): Promise<void> {
  logger.info({ why }, 'stopping: finishing in-flight reconciles');
  signals.stopping.abort();
  const grace = setTimeout(
    () => signals.hardStop.abort(new Error('shutdown grace period over')),
    config.shutdownGraceMs,
  );
  try {
    await work.queue.shutdown();
  } finally {
    clearTimeout(grace);
  }
  await Promise.all([work.applySets.done, work.secretPoller.done]);
  if (why === 'stopped') await election?.release();
  await Promise.all([servers.probe.close(), servers.webhook?.close(), servers.ui?.close()]);
  logger.info({}, 'stopped');
}

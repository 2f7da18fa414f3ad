import { MEMBER_WATCH_OPTIONS, memberWatchFlags } from './member-watch-flags.js';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultIdentity, type ControllerConfig } from '../controller/runtime/controller-config.js';
import { runController } from '../controller/runtime/run-controller.js';
import type { EngineHooks } from '../controller/runtime/shared-engines.js';
import { parseSourceHostList } from '../net/host-list.js';
import { createKubeCredentials } from '../kube/kube-credentials.js';
import { kubeUserAgent } from '../kube/user-agent.js';
import { packageVersion } from '../package-version.js';
import { KubeConfigError, loadKubeConfig } from '../kube/load-kube-config.js';
import { createLogger } from '../observability/create-logger.js';
import type { Tracing, TracingSettings } from '../observability/tracing.js';
import { tracingSettingsOf } from './tracing-env.js';
import type { CliIo, Command } from './cli-io.js';
import {
  SERVICE_ACCOUNT_NAME,
  TenancyFlagError,
  tenancyFlags,
  type TenancyConfig,
} from './controller-tenancy-flags.js';
import { ExitCode } from './exit-codes.js';
import { HEALTH_CHECK_EXPRS_OPTIONS, healthCheckExprsConfig } from './health-check-exprs-flag.js';
import { durationFlags } from './controller-duration-flags.js';
import { GIT_LIMIT_OPTIONS, gitLimitConfig } from './git-limit-flags.js';
import { KUSTOMIZE_OPTIONS, kustomizeConfig } from './kustomize-flags.js';
import { NOTIFICATION_OPTIONS, notificationSettings } from './notification-flags.js';
import { proxiesOf } from './cli-proxies.js';
import { UsageError } from './parse-command-line.js';
import { reportUnexpected } from './report-unexpected.js';
import { CONTROLLER_USAGE as usage } from './controller-usage.js';

/** `applyset controller`: reads flags and environment once, runs until SIGTERM or SIGINT. */
export const controllerCommand: Command = (argv, io) => runControllerCommand(argv, io, {});

/**
 * The command with settings no flag reaches: the fault tests' own entry point passes an engine
 * step hook here to freeze a replica mid-reconcile.
 */
export async function runControllerCommand(
  argv: readonly string[],
  io: CliIo,
  hooks: EngineHooks,
): Promise<number> {
  let config: ControllerConfig;
  let level: string;
  let traces: TracingSettings | undefined;
  try {
    const parsed = parseControllerFlags(argv, io);
    if (parsed === 'help') {
      io.stdout.write(usage);
      return ExitCode.ok;
    }
    ({ config, level } = parsed);
    traces = tracingSettingsOf(io.env, config.identity);
  } catch (error) {
    // Only a flag or a kubeconfig is the user's to fix; anything else is a bug, not bad input.
    if (!(error instanceof UsageError || error instanceof KubeConfigError)) {
      return reportUnexpected('controller', error, io);
    }
    io.stderr.write(`applyset controller: ${error.message}\n\n${usage}`);
    return ExitCode.badInput;
  }
  const logger = createLogger({ level, destination: io.stdout });
  const tracing = traces === undefined ? undefined : await startTracing(traces);
  if (traces !== undefined) logger.info({ endpoint: traces.endpoint }, 'exporting traces');
  const controller = await runController(
    tracing === undefined ? config : { ...config, tracer: tracing.tracer },
    logger,
    hooks,
  );
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutdown requested');
    void controller.stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const why = await controller.done;
    const code = why === 'stopped' ? ExitCode.ok : ExitCode.failure;
    // The spans still batched go out before the process ends; a collector that does not answer costs
    // them, not the exit (the exporter's own timeout, then the grace below).
    await tracing?.shutdown().catch((error: unknown) => {
      logger.warn({ err: error }, 'could not send the last spans');
    });
    // Everything the controller opened is closed by now; a connection a library left open must not keep
    // a stopped pod alive until its grace period ends. The timer itself holds nothing open.
    setTimeout(() => process.exit(code), STOPPED_EXIT_GRACE_MS).unref();
    return code;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * Tracing on: the OpenTelemetry SDK and its OTLP exporter, loaded only then. Off, the controller never
 * loads them (about 12 MiB of RSS in each controller and shard), and its spans are the API's no-ops.
 */
async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const [{ createTracing }, { createOtlpTraceExporter }] = await Promise.all([
    import('../observability/tracing.js'),
    import('../net/otlp-trace-exporter.js'),
  ]);
  return createTracing(settings, createOtlpTraceExporter, packageVersion());
}

/** How long a stopped controller's process may linger on open connections before it exits anyway. */
const STOPPED_EXIT_GRACE_MS = 5_000;

const CONTROLLER_OPTIONS = {
  kubeconfig: { type: 'string' },
  concurrency: { type: 'string', default: '4' },
  'max-builds': { type: 'string' },
  'max-builds-per-namespace': { type: 'string', default: '1' },
  'metrics-addr': { type: 'string', default: ':8080' },
  'leader-elect': { type: 'boolean', default: false },
  namespace: { type: 'string' },
  'watch-label-selector': { type: 'string' },
  'lease-name': { type: 'string', default: 'applyset-controller-leader' },
  'git-cache-dir': { type: 'string' },
  'lease-duration': { type: 'string', default: '15s' },
  'renew-deadline': { type: 'string', default: '10s' },
  'retry-period': { type: 'string', default: '2s' },
  'shutdown-grace': { type: 'string', default: '45s' },
  'shared-fetch-max-age': { type: 'string', default: '0s' },
  'allowed-source-hosts': { type: 'string', default: '' },
  // The default; with --apply-as-controller it keeps refusing Secrets without source hosts.
  'require-secret-source-hosts': { type: 'boolean', default: false },
  'apply-as-controller': { type: 'boolean', default: false },
  'webhook-addr': { type: 'string' },
  'webhook-secret': { type: 'string' },
  'ui-address': { type: 'string' },
  'cluster-name': { type: 'string' },
  'default-service-account': { type: 'string' },
  // The default; still accepted so that command lines written for older releases keep working.
  'no-cross-namespace-refs': { type: 'boolean', default: false },
  'allow-cross-namespace-refs': { type: 'boolean', default: false },
  'allow-secret-refs-from': { type: 'string', default: '' },
  'allow-nested-applysets': { type: 'boolean', default: false },
  'allowed-remote-cluster-hosts': { type: 'string', default: '' },
  'allow-remote-kubeconfig-exec': { type: 'boolean', default: false },
  'allow-remote-kubeconfig-files': { type: 'boolean', default: false },
  ...GIT_LIMIT_OPTIONS,
  ...MEMBER_WATCH_OPTIONS,
  ...KUSTOMIZE_OPTIONS,
  ...NOTIFICATION_OPTIONS,
  ...HEALTH_CHECK_EXPRS_OPTIONS,
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type ControllerFlagValues = ReturnType<typeof readControllerFlags>;

function parseControllerFlags(
  argv: readonly string[],
  io: CliIo,
): { config: ControllerConfig; level: string } | 'help' {
  const values = readControllerFlags(argv);
  if (values.help) return 'help';
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new UsageError(`--concurrency must be a positive integer, got "${values.concurrency}"`);
  }
  const memberWatches = memberWatchFlags(values);
  const tenancy = checkTenancyFlags(values);
  const webhook = checkWebhookFlags(values);
  const ui = checkUiFlags(values);
  const shard = shardFlags(values);
  // controller-runtime's order: --kubeconfig, KUBECONFIG, the pod's service account, ~/.kube/config.
  const { kubeConfig } = loadKubeConfig(
    io.env,
    values.kubeconfig === undefined ? undefined : resolve(io.cwd, values.kubeconfig),
    undefined,
    { inCluster: 'first' },
  );
  // Made once, for every client of the controller (its Lease's too). A certificate file that is
  // missing, a proxy-url…: refused now, not at the first request.
  const credentials = createKubeCredentials(kubeConfig, { userAgent: kubeUserAgent('applyset-controller') });
  const env = io.env;
  const proxies = proxiesOf(env);
  const gitCacheDir =
    values['git-cache-dir'] ??
    nonEmpty(env['APPLYSET_GIT_CACHE_DIR']) ??
    join(tmpdir(), 'applyset-git-cache');
  return {
    level: nonEmpty(env['LOG_LEVEL']) ?? 'info',
    config: {
      credentials,
      concurrency,
      metricsAddress: values['metrics-addr'],
      leaderElect: values['leader-elect'],
      namespace: values.namespace,
      ...shard,
      gitCacheDir: resolve(io.cwd, gitCacheDir),
      identity: defaultIdentity(env),
      leaseNamespace: nonEmpty(env['POD_NAMESPACE']) ?? values.namespace ?? 'default',
      ...durationFlags(values),
      allowedSourceHosts: parseSourceHostList(values['allowed-source-hosts']),
      proxies,
      ...tenancy,
      ...(values['allow-nested-applysets'] ? { allowNestedApplySets: true } : {}),
      remoteKubeConfig: {
        allowExec: values['allow-remote-kubeconfig-exec'],
        allowFiles: values['allow-remote-kubeconfig-files'],
        allowedHosts: parseSourceHostList(values['allowed-remote-cluster-hosts']),
        proxies,
      },
      ...webhook,
      ...ui,
      ...gitLimitConfig(values),
      kustomize: kustomizeConfig(values, env),
      builds: buildLimits(values),
      memberWatches,
      notifications: { ...notificationSettings(values), proxies },
      ...healthCheckExprsConfig(values),
    },
  };
}

/**
 * `--max-builds` (default: one per core, at most two) and `--max-builds-per-namespace` (default 1).
 * Each build may use --kustomize-max-memory inside the controller's container: the chart's 512 Mi
 * holds the controller and about two, so more builds at once need a larger limit too.
 */
function buildLimits(values: ControllerFlagValues): NonNullable<ControllerConfig['builds']> {
  const count = (flag: 'max-builds' | 'max-builds-per-namespace', given: string): number => {
    const value = Number(given);
    if (!/^\d+$/.test(given) || value < 1 || value > 64) {
      throw new UsageError(`--${flag} must be a whole number from 1 to 64, got ${JSON.stringify(given)}`);
    }
    return value;
  };
  const cores = Math.max(1, Math.min(availableParallelism(), 2));
  return {
    maxRunning: count('max-builds', values['max-builds'] ?? String(cores)),
    maxRunningPerNamespace: count('max-builds-per-namespace', values['max-builds-per-namespace']),
  };
}

/** The flags as given, none of them twice. */
function readControllerFlags(argv: readonly string[]) {
  const { values, tokens } = parseFlags(argv);
  // No flag of the controller repeats: a second value is a mistake to report, never silently the one
  // that wins (`--namespace a --namespace b` would watch b alone).
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} was given more than once`);
    seen.add(token.name);
  }
  return values;
}

/**
 * node:util's parseArgs, its refusals (an unknown flag, a missing value: `ERR_PARSE_ARGS_*` codes on a
 * TypeError) as usage errors; any other TypeError stays what it is, a bug.
 */
function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      tokens: true,
      options: CONTROLLER_OPTIONS,
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError((error as Error).message, { cause: error });
    }
    throw error;
  }
}

/**
 * Which ApplySets this controller reconciles beyond the namespace, and the Lease its replicas share.
 * The selector is checked by the API server at the first LIST (a bad one fails the start, loudly); an
 * empty one would silently mean every ApplySet, so it is refused here.
 */
function shardFlags(
  values: ControllerFlagValues,
): Pick<ControllerConfig, 'watchLabelSelector' | 'leaseName'> {
  const selector = values['watch-label-selector'];
  if (selector !== undefined && selector.trim() === '') {
    throw new UsageError('--watch-label-selector must not be empty: leave it out to watch every ApplySet');
  }
  const leaseName = values['lease-name'];
  if (!LEASE_NAME.test(leaseName)) {
    throw new UsageError(`--lease-name must be a Lease name (a DNS-1123 subdomain), got "${leaseName}"`);
  }
  return { ...(selector === undefined ? {} : { watchLabelSelector: selector.trim() }), leaseName };
}

/** The tenancy flags (controller-tenancy-flags.ts), their mistakes as usage errors. */
function checkTenancyFlags(values: ControllerFlagValues): TenancyConfig {
  try {
    return tenancyFlags(values);
  } catch (error) {
    if (error instanceof TenancyFlagError) throw new UsageError(error.message);
    throw error;
  }
}

function checkWebhookFlags(
  values: ControllerFlagValues,
): Pick<ControllerConfig, 'webhookAddress' | 'webhookSecret'> {
  const webhookAddress = values['webhook-addr'];
  const webhookSecret = values['webhook-secret'];
  if ((webhookAddress === undefined) !== (webhookSecret === undefined)) {
    throw new UsageError('--webhook-addr and --webhook-secret go together');
  }
  if (webhookSecret !== undefined && !/^[a-z0-9][-a-z0-9]*\/[a-z0-9][-a-z0-9.]*$/.test(webhookSecret)) {
    throw new UsageError(`--webhook-secret must be NAMESPACE/NAME, got "${webhookSecret}"`);
  }
  return webhookAddress === undefined || webhookSecret === undefined ? {} : { webhookAddress, webhookSecret };
}

/** `--ui-address`, a Go-style listen address, checked before anything starts. */
function checkUiFlags(values: ControllerFlagValues): Pick<ControllerConfig, 'uiAddress' | 'clusterName'> {
  const clusterName = values['cluster-name'];
  const named = clusterName === undefined || clusterName === '' ? {} : { clusterName };
  const address = values['ui-address'];
  if (address === undefined) return named;
  const port = /^(?:\[[0-9a-fA-F:.]+\]|[^:[\]\s]*):(\d{1,5})$/.exec(address)?.[1];
  if (port === undefined || Number(port) > 65535) {
    throw new UsageError(`--ui-address must be [HOST]:PORT, e.g. :8090, got "${address}"`);
  }
  return { uiAddress: address, ...named };
}

/** A Lease name is a DNS-1123 subdomain, as a ServiceAccount name is. */
const LEASE_NAME = SERVICE_ACCOUNT_NAME;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

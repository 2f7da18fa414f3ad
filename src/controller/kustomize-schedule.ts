import type { BuildScheduler, ScheduleBuild } from '../builds/build-scheduler.js';
import { KustomizeError } from '../kustomize/kustomize-error.js';
import { HelmError } from '../helm/helm-error.js';
import { HELM_LABEL_PREFIX } from '../helm/render-chart.js';
import { DEFAULT_KUSTOMIZE_OPTIONS, type KustomizeOptions } from '../kustomize/run-kustomize.js';
import type { ReconcileContext, ReconcilerOptions } from './reconcile-context.js';
import type { QueueWorker } from './runtime/worker-pool.js';

/**
 * The share of an ApplySet's interval one of its builds may run: a build that needs the whole interval
 * would keep a build slot busy for good, and the next run would come while it still runs.
 */
const BUILD_SHARE_OF_INTERVAL = 0.5;
/**
 * The least time a build is given whatever the interval (still at most --kustomize-timeout): a short
 * interval must not fail a build that a loaded node merely starts slowly.
 */
const MIN_BUILD_TIME_LIMIT_MS = 10_000;

/**
 * How one reconcile's kustomization is built: by the controller's build scheduler, as a build of the
 * ApplySet's namespace, limited to BUILD_SHARE_OF_INTERVAL of its interval (at least
 * MIN_BUILD_TIME_LIMIT_MS, at most --kustomize-timeout).
 * The reconcile's worker is handed back while the build waits and runs (`worker.away`), so ApplySets
 * that need no build never queue behind those that do.
 * @internal test seam: its unit test drives the schedule without a reconcile
 */
export function kustomizeSchedule(
  builds: BuildScheduler,
  options: KustomizeOptions,
  run: {
    readonly namespace: string;
    readonly intervalMs: number;
    readonly worker: QueueWorker | undefined;
    readonly signal: AbortSignal;
  },
): ScheduleBuild {
  const share = Math.max(MIN_BUILD_TIME_LIMIT_MS, Math.floor(run.intervalMs * BUILD_SHARE_OF_INTERVAL));
  const timeoutMs = Math.min(options.timeoutMs, share);
  const why =
    timeoutMs < options.timeoutMs
      ? `half of spec.interval, ${run.intervalMs / 1000} s; --kustomize-timeout is ${options.timeoutMs / 1000} s`
      : '--kustomize-timeout';
  return (label, build) => {
    const scheduled = () =>
      builds.run(
        {
          tenant: run.namespace,
          timeoutMs,
          signal: run.signal,
          timeoutError: () => {
            const message = `${label} was stopped: it ran past its time limit of ${timeoutMs / 1000} s (${why})`;
            return label.startsWith(HELM_LABEL_PREFIX)
              ? new HelmError('failed', message)
              : new KustomizeError('failed', message);
          },
        },
        build,
      );
    return run.worker === undefined ? scheduled() : run.worker.away(scheduled);
  };
}

/** The kustomize options of this run: its builds wait for a slot of the build scheduler, when there is one. */
export function scheduledKustomize(
  ctx: Pick<ReconcileContext, 'namespace' | 'worker'>,
  options: Pick<ReconcilerOptions, 'kustomize' | 'builds'>,
  spec: { readonly intervalMs: number },
  signal: AbortSignal,
): KustomizeOptions {
  const kustomize = options.kustomize ?? DEFAULT_KUSTOMIZE_OPTIONS;
  if (options.builds === undefined) return kustomize;
  const schedule = kustomizeSchedule(options.builds, kustomize, {
    namespace: ctx.namespace,
    intervalMs: spec.intervalMs,
    worker: ctx.worker,
    signal,
  });
  return { ...kustomize, schedule };
}

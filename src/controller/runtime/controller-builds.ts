import { createBuildScheduler, type BuildScheduler } from '../../builds/build-scheduler.js';
import type { ControllerMetrics } from '../../observability/controller-metrics.js';
import type { ControllerConfig } from './controller-config.js';

/** The controller's build scheduler (`--max-builds`, `--max-builds-per-namespace`), counted in its metrics. */
export function controllerBuilds(config: ControllerConfig, metrics: ControllerMetrics): BuildScheduler {
  const builds = createBuildScheduler({
    maxRunning: config.builds?.maxRunning ?? 1,
    maxRunningPerTenant: config.builds?.maxRunningPerNamespace ?? 1,
    now: Date.now,
    onChange: (event) => {
      if (event === 'held') metrics.countBuildsHeldBack();
    },
  });
  metrics.setBuildCountsSource(() => builds.counts());
  return builds;
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { chart, find, release, render, useHelm } from '../deploy/helm-chart-kit.js';
import { dashboardSeriesNames, promqlSeriesNames } from '../deploy/promql-series-names.js';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { metricsLines } from './controller-metrics.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapYaml,
  createApplySet,
  waitFor,
  waitForAppliedCommit,
  waitForReady,
  type ControllerProcess,
} from './e2e-kit.js';

// The chart's dashboard and alerts read only series a real controller exports: every metric name in
// every panel, variable and alert expression is looked up in the live /metrics of a controller that
// reconciles one ApplySet to Ready and fails another on its Git fetch. `up` is the one exception:
// Prometheus writes it for every target it scrapes, no exporter serves it.

const SERIES_PROMETHEUS_ADDS = new Set(['up']);

/** The names a scrape shows: sample names, and the samples a declared family will have once observed. */
function exportedNames(lines: readonly string[]): { sampled: Set<string>; declared: Set<string> } {
  const sampled = new Set<string>();
  const declared = new Set<string>();
  for (const line of lines) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] !== undefined) {
      const suffixes = type[2] === 'histogram' ? ['_bucket', '_count', '_sum'] : [''];
      for (const suffix of suffixes) declared.add(type[1] + suffix);
    } else if (line !== '' && !line.startsWith('#')) sampled.add(/^[^{ ]+/.exec(line)?.[0] ?? line);
  }
  return { sampled, declared };
}

async function alertExpressions(): Promise<string[]> {
  const objects = await render({ 'monitoring.prometheusRule.enabled': 'true' });
  const rule = find(objects, 'PrometheusRule', `${release}-applyset-controller`) as unknown as {
    spec: { groups: { rules: { expr: string }[] }[] };
  };
  return rule.spec.groups.flatMap((group) => group.rules.map((r) => r.expr));
}

useHelm();

describe('the dashboard and the alerts against a live controller', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-monitoring');
  let git: GitTestServer;
  let controller: ControllerProcess;

  beforeAll(async () => {
    ({ git, controller } = await startControllerWithRepository(c, namespace, {
      'a.yaml': configMapYaml('a', { v: '1' }),
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('name only series the controller exports', async () => {
    await createApplySet(c, namespace, 'ready', { url: git.url });
    await createApplySet(c, namespace, 'failing', { url: `${git.url}-missing` });
    await waitForAppliedCommit(c, namespace, 'ready', await git.revParse('main'), 60_000);
    await waitForReady(c, namespace, 'failing', 'False');
    const lines = await waitFor(
      'both ApplySets and a failed Git fetch in /metrics',
      async () => {
        const now = await metricsLines(controller);
        const wanted = [
          `applyset_ready{namespace="${namespace}",name="ready"} 1`,
          `applyset_ready{namespace="${namespace}",name="failing"} 0`,
          'applyset_leader 1',
        ];
        const failedFetch = now.some((line) =>
          line.startsWith('applyset_git_fetch_duration_seconds_count{result="failure"}'),
        );
        return wanted.every((line) => now.includes(line)) && failedFetch ? now : undefined;
      },
      30_000,
    );

    const dashboard = JSON.parse(await readFile(path.join(chart, 'files/grafana-dashboard.json'), 'utf8'));
    const dashboardNames = dashboardSeriesNames(dashboard);
    const alertNames = (await alertExpressions()).flatMap(promqlSeriesNames);
    // The extractor found the queries: a dashboard or rule file it read as empty would pass vacuously.
    expect(dashboardNames.length).toBeGreaterThan(10);
    expect(alertNames).toEqual(expect.arrayContaining(['applyset_ready', 'applyset_leader', 'up']));

    const { sampled, declared } = exportedNames(lines);
    const missing = (names: readonly string[]) =>
      [...new Set(names)].filter(
        (n) => !SERIES_PROMETHEUS_ADDS.has(n) && !sampled.has(n) && !declared.has(n),
      );
    expect({ dashboard: missing(dashboardNames), alerts: missing(alertNames) }).toEqual({
      dashboard: [],
      alerts: [],
    });
    // Declared without a sample so far: only the series of events this scenario never causes.
    const unsampled = [...new Set([...dashboardNames, ...alertNames])].filter(
      (n) => !SERIES_PROMETHEUS_ADDS.has(n) && !sampled.has(n),
    );
    expect(unsampled.sort()).toEqual(['applyset_drift_total', 'applyset_fights_total']);
  });
});

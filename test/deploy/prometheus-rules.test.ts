import path from 'node:path';
import { find, HELM_TIMEOUT_MS, release, render, root, useHelm } from './helm-chart-kit.js';
import { checkAndTestRules, findPromtool } from './promtool-kit.js';

// The chart's alerts (monitoring.prometheusRule) as Prometheus loads them: rendered by a real helm,
// checked and unit-tested by Prometheus's own promtool against series named as the controller exports
// them (prometheus-rules-test.yaml). A rule naming a series the controller does not export, or a
// threshold other than the one documented, fails here.

useHelm();

let promtool = '';
beforeAll(async () => {
  promtool = await findPromtool();
}, HELM_TIMEOUT_MS);

const testFile = path.join(root, 'test/deploy/prometheus-rules-test.yaml');

interface RuleSpec {
  groups: { name: string; rules: { alert: string; expr: string; for?: string }[] }[];
}

async function renderedGroups(values: Record<string, string> = {}): Promise<RuleSpec['groups']> {
  const objects = await render({ 'monitoring.prometheusRule.enabled': 'true', ...values });
  const rule = find(objects, 'PrometheusRule', `${release}-applyset-controller`) as unknown as {
    spec: RuleSpec;
  };
  return rule.spec.groups;
}

describe('the alert rules', () => {
  it(
    'pass promtool check rules and every case of promtool test rules',
    async () => {
      const result = await checkAndTestRules(promtool, await renderedGroups(), testFile);
      // promtool's own report is the failure message: it names the alert, the time and what differed.
      expect(result.ok ? 'passed' : result.output).toBe('passed');
      expect(result.output).toContain('SUCCESS');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'fail promtool test rules when a threshold in the values moves away from the tested one',
    async () => {
      const groups = await renderedGroups({ 'monitoring.prometheusRule.thresholds.queueDepth': '100' });
      const result = await checkAndTestRules(promtool, groups, testFile);
      expect(result.ok).toBe(false);
      expect(result.output).toContain('ApplySetQueueBackingUp');
    },
    HELM_TIMEOUT_MS,
  );

  it(
    'fail promtool test rules when a rule names a series the controller does not export',
    async () => {
      const groups = (await renderedGroups()).map((group) => ({
        ...group,
        rules: group.rules.map((rule) =>
          rule.alert === 'ApplySetDriftDetected'
            ? { ...rule, expr: rule.expr.replace('applyset_drift_total', 'applyset_drifts_total') }
            : rule,
        ),
      }));
      const result = await checkAndTestRules(promtool, groups, testFile);
      expect(result.ok).toBe(false);
      expect(result.output).toContain('ApplySetDriftDetected');
    },
    HELM_TIMEOUT_MS,
  );
});

import { controllerContainer, HELM_TIMEOUT_MS, render, useHelm } from './helm-chart-kit.js';
import { healthCheckExprsConfig } from '../../src/cli/health-check-exprs-flag.js';

// health.checkExprs reaches the controller as --health-check-exprs, rendered by a real helm.

useHelm();

describe('the chart value health.checkExprs', () => {
  it(
    'passes the default CEL health checks as JSON the controller reads back, and none by default',
    async () => {
      const current = "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')";
      const { container } = controllerContainer(
        await render({}, [
          '--set',
          'health.checkExprs[0].apiVersion=cert-manager.io/v1',
          '--set',
          'health.checkExprs[0].kind=Certificate',
          '--set-string',
          `health.checkExprs[0].current=${current.replaceAll(',', '\\,')}`,
        ]),
      );
      const at = container.args.indexOf('--health-check-exprs');
      expect(at).toBeGreaterThan(-1);
      expect(healthCheckExprsConfig({ 'health-check-exprs': container.args[at + 1] })).toEqual({
        healthCheckExprs: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', current }],
      });
      const plain = controllerContainer(await render({})).container;
      expect(plain.args).not.toContain('--health-check-exprs');
    },
    HELM_TIMEOUT_MS,
  );

  it('stops the controller at start on a default that does not parse, naming the entry', () => {
    const bad = JSON.stringify([{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'status.phase ==' }]);
    expect(() => healthCheckExprsConfig({ 'health-check-exprs': bad })).toThrow(
      "the default health checks (the chart's health.checkExprs) are wrong: --health-check-exprs[0].current (example.com/v1 Widget) is not valid CEL: <input>:1:14: found = but expecting end of input",
    );
    expect(() => healthCheckExprsConfig({ 'health-check-exprs': '{' })).toThrow(
      '--health-check-exprs: is not JSON: give a JSON list of health checks',
    );
  });
});

import type { ApplySet } from '../../src/api/applyset-types.js';
import type { HealthCheckExpr } from '../../src/health/cel-health.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { readObjectStates } from '../../src/ui/read-object-states.js';
import type { UiObjectReader } from '../../src/ui/ui-data.js';

// The web view's health column judges a set's objects as the controller does: by the set's CEL
// checks, else the cluster's default ones, else kstatus's rules.

const WIDGET = 'widgets.example.com/v1';

const widgetCheck = (current: string): HealthCheckExpr => ({
  apiVersion: WIDGET,
  kind: 'Widget',
  current,
  failed: "status.phase == 'Broken'",
});

function applySet(healthCheckExprs?: unknown): ApplySet {
  return {
    apiVersion: 'applyset.dev/v1alpha1',
    kind: 'ApplySet',
    metadata: { namespace: 'team', name: 'app' },
    spec: {
      source: { url: 'https://git.example/repo.git', ref: { branch: 'main' } },
      prune: true,
      ...(healthCheckExprs === undefined ? {} : { healthCheckExprs: healthCheckExprs as HealthCheckExpr[] }),
    },
    status: {
      conditions: [],
      inventory: {
        items: ['team_w_widgets.example.com_Widget', 'team_settings__ConfigMap'],
        totalCount: 2,
        truncated: false,
      },
    },
  };
}

const widget = (phase: string): JsonObject => ({
  apiVersion: WIDGET,
  kind: 'Widget',
  metadata: { namespace: 'team', name: 'w', generation: 1 },
  status: { phase },
});

const readerOf =
  (objects: Record<string, JsonObject>): UiObjectReader =>
  (ref) =>
    Promise.resolve(objects[ref.kind]);

const configMap: JsonObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'team', name: 'settings' },
};

describe('readObjectStates', () => {
  it("judges a kind by the set's own CEL check", async () => {
    const set = applySet([widgetCheck("status.phase == 'Running'")]);
    const states = await readObjectStates(
      set,
      readerOf({ Widget: widget('Broken'), ConfigMap: configMap }),
      10,
    );
    expect(states.map((state) => [state.kind, state.health])).toEqual([
      ['Widget', 'Failed'],
      ['ConfigMap', 'Current'],
    ]);
  });

  it("uses the cluster's default check, and the set's own entry wins over it", async () => {
    const reader = readerOf({ Widget: widget('Running'), ConfigMap: configMap });
    const defaults = [widgetCheck("status.phase == 'Running'")];
    expect((await readObjectStates(applySet(), reader, 10, defaults))[0]?.health).toBe('Current');
    const own = applySet([widgetCheck("status.phase == 'Ready'")]);
    expect((await readObjectStates(own, reader, 10, defaults))[0]?.health).toBe('InProgress');
  });

  it('judges by kstatus when the set has no check for the kind, or one that does not parse', async () => {
    const reader = readerOf({ Widget: widget('Broken'), ConfigMap: configMap });
    // A custom resource with no conditions is Current by kstatus's rules, whatever its phase.
    expect((await readObjectStates(applySet(), reader, 10))[0]?.health).toBe('Current');
    const broken = applySet([widgetCheck('status.phase ==')]);
    expect((await readObjectStates(broken, reader, 10))[0]?.health).toBe('Current');
  });
});

import { setTimeout as delay } from 'node:timers/promises';
import { Watch } from '@kubernetes/client-node';
import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  kubectl,
  kubectlApply,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';

// CEL health checks (spec.healthCheckExprs, Flux's shape) and a CEL `ready` on a dependsOn object, with
// the controller as its own process and a CRD this suite installs. Its custom resources get their status
// from the test, or from a tiny operator of the test's own: a watch on the resources that writes each
// one's status after reading its spec, as a real operator would.

interface WidgetObject {
  readonly metadata: { readonly name: string; readonly generation: number };
  readonly spec?: { readonly size?: number };
  readonly status?: { readonly observedGeneration?: number };
}

describe('CEL health checks on a custom resource', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-cel-health');
  const group = `cel${namespace.slice(-6).replace(/[^a-z0-9]/g, '')}.example.com`;
  const apiVersion = `${group}/v1`;
  const widget = (name: string, size: number, labels = '{}') =>
    `apiVersion: ${apiVersion}\nkind: Widget\nmetadata: { name: ${name}, namespace: ${namespace}, labels: ${labels} }\nspec: { size: ${size} }\n`;
  const checks = [
    {
      apiVersion,
      kind: 'Widget',
      failed: "status.phase == 'Failed'",
      current: "status.phase == 'Ready' && status.size == spec.size",
    },
  ];
  let git: GitTestServer | undefined;
  let operator: AbortController | undefined;

  beforeAll(async () => {
    await kubectlApply(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.${group} }
spec:
  group: ${group}
  names: { kind: Widget, plural: widgets, singular: widget, listKind: WidgetList }
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/widgets.${group}`]);
    ({ git } = await startControllerWithRepository(
      c,
      namespace,
      {
        'waited/widget.yaml': widget('gizmo', 3),
        'broken/widget.yaml': widget('broken', 1),
        'operated/widget.yaml': widget('gadget', 2, '{ operated: "yes" }'),
        'bad/cm.yaml': configMapYaml('bad', { set: 'bad' }),
        'after/cm.yaml': configMapYaml('after', { set: 'after' }),
      },
      // The account needs no rights on the suite's own kind: the controller applies as itself.
      { args: ['--apply-as-controller'] },
    ));
    operator = await startWidgetOperator();
  });

  afterAll(async () => {
    operator?.abort();
    await stopControllersAndGit(git);
    await kubectl(['delete', 'crd', `widgets.${group}`, '--wait=false']).catch(() => undefined);
  });

  /**
   * The operator: each Widget labelled operated=yes gets status phase Ready and its spec.size. Like an
   * informer, it watches again whenever its watch ends or fails (a new CRD's endpoint may refuse the
   * first watch), and the new watch lists what exists first.
   */
  async function startWidgetOperator(): Promise<AbortController> {
    const path = `/apis/${group}/v1/namespaces/${namespace}/widgets`;
    const stopped = new AbortController();
    const watchOnce = async (): Promise<void> => {
      if (stopped.signal.aborted) return;
      const again = () => void delay(500).then(watchOnce);
      try {
        const request = await new Watch(c.kc).watch(
          path,
          { labelSelector: 'operated=yes' },
          (phase, object: WidgetObject) => {
            if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
            if (object.status?.observedGeneration === object.metadata.generation) return;
            const status = {
              phase: 'Ready',
              size: object.spec?.size ?? 0,
              observedGeneration: object.metadata.generation,
            };
            void setStatus(object.metadata.name, status).catch(() => undefined);
          },
          () => again(),
        );
        stopped.signal.addEventListener('abort', () => request.abort(), { once: true });
      } catch {
        again();
      }
    };
    await watchOnce();
    return stopped;
  }

  const setStatus = (name: string, status: object) =>
    kubectl([
      '-n',
      namespace,
      'patch',
      `widgets.${group}`,
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);

  const create = (name: string, spec: object) =>
    createApplySetWithSpec(c, namespace, name, { url: git?.url ?? '', interval: '1h', path: name }, spec);

  const readyWith = (
    name: string,
    status: 'True' | 'False' | 'Unknown',
    text: string,
  ): Promise<ApplySetView> =>
    waitForReady(
      c,
      namespace,
      name,
      status,
      (view) => condition(view, 'Ready')?.message.includes(text) ?? false,
      120_000,
    );

  it('waits until the current expression holds, then is Ready; a failed expression names itself', async () => {
    await create('waited', { wait: true, timeout: '30s', healthCheckExprs: checks });
    const waiting = await readyWith('waited', 'Unknown', 'widget');
    expect(condition(waiting, 'Ready')?.message).toBe(
      `waiting for widget.${group}/gizmo: failed expression status.phase == 'Failed' failed: unresolved attribute (the object's top-level fields are apiVersion, kind, metadata, spec)`,
    );
    await setStatus('gizmo', { phase: 'Ready', size: 2 });
    const stillWaiting = await readyWith('waited', 'Unknown', 'current expression is false');
    expect(condition(stillWaiting, 'Ready')?.message).toBe(
      `waiting for widget.${group}/gizmo: current expression is false: status.phase == 'Ready' && status.size == spec.size`,
    );
    await setStatus('gizmo', { phase: 'Ready', size: 3 });
    const ready = await waitForReady(c, namespace, 'waited', 'True', undefined, 120_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');

    await create('broken', { wait: true, timeout: '30s', healthCheckExprs: checks });
    await readyWith('broken', 'Unknown', 'widget');
    await setStatus('broken', { phase: 'Failed' });
    const failed = await readyWith('broken', 'False', 'failed expression is true');
    expect(condition(failed, 'Ready')).toMatchObject({
      reason: 'HealthCheckFailed',
      message: `applied, but 1 object(s) failed: widget.${group}/broken -n ${namespace}: failed expression is true: status.phase == 'Failed'`,
    });
  });

  it("is Ready once the suite's operator has written the status the expression accepts", async () => {
    await create('operated', { wait: true, timeout: '30s', healthCheckExprs: checks });
    const ready = await waitForReady(c, namespace, 'operated', 'True', undefined, 120_000);
    expect(condition(ready, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    const live = JSON.parse(
      await kubectl(['-n', namespace, 'get', `widgets.${group}`, 'gadget', '-o', 'json']),
    ) as { status: object };
    expect(live.status).toMatchObject({ phase: 'Ready', size: 2 });
  });

  it('stalls on an expression that does not parse, naming the kind, the field and the parser', async () => {
    await create('bad', { healthCheckExprs: [{ apiVersion, kind: 'Widget', current: 'status.phase ==' }] });
    const stalled = await readyWith('bad', 'False', 'invalid spec');
    expect(condition(stalled, 'Ready')).toMatchObject({
      reason: 'InvalidSpec',
      message: `invalid spec: spec.healthCheckExprs[0].current (${apiVersion} Widget) is not valid CEL: <input>:1:14: found = but expecting end of input`,
    });
    expect(condition(stalled, 'Stalled')?.status).toBe('True');
    expect(await configMapData(c, namespace, 'bad')).toBeUndefined();
  });

  it('waits for a dependsOn object until its ready expression is true, showing the expression', async () => {
    await kubectlApply(widget('prerequisite', 3));
    await setStatus('prerequisite', { size: 1 });
    await create('after', {
      retryInterval: '2s',
      dependsOn: [{ apiVersion, kind: 'Widget', name: 'prerequisite', ready: 'status.size >= spec.size' }],
    });
    const waiting = await readyWith('after', 'False', 'ready expression');
    expect(condition(waiting, 'Ready')).toMatchObject({
      reason: 'DependencyNotReady',
      message: `waiting for dependencies: Widget ${namespace}/prerequisite is InProgress: ready expression is false: status.size >= spec.size`,
    });
    expect(await configMapData(c, namespace, 'after')).toBeUndefined();
    await setStatus('prerequisite', { size: 3 });
    await waitForReady(c, namespace, 'after', 'True', undefined, 120_000);
    expect(await configMapData(c, namespace, 'after')).toEqual({ set: 'after' });
  });
});

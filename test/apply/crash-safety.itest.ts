import { computeApplyHash } from '../../src/inventory/apply-hash.js';
import { parseInventory } from '../../src/inventory/parse-inventory.js';
import { objectRefKey } from '../../src/manifests/object-ref.js';
import type { PlanStep } from '../../src/plan/plan.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  annotations,
  configMapYaml,
  countingClient,
  engineFor,
  getObject,
  kubectl,
  labels,
  requestFor,
  writeSetDirectory,
} from './apply-test-kit.js';

class InjectedCrash extends Error {
  override readonly name = 'InjectedCrash';
}

const deploymentYaml = (namespace: string, image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: ${namespace}
spec:
  selector:
    matchLabels: { app: app }
  template:
    metadata:
      labels: { app: app }
    spec:
      containers:
        - name: app
          image: ${image}
`;

async function parentOf(namespace: string) {
  return getObject(`/api/v1/namespaces/${namespace}/configmaps/crashy`);
}

/** Every live member of the set (by its part-of label) must be recorded in the parent's list. */
async function expectNoOrphan(namespace: string) {
  const parent = await parentOf(namespace);
  const id = labels(parent)['applyset.kubernetes.io/id'];
  const recorded = new Set(
    parseInventory(annotations(parent)['kubectl.kubernetes.io/last-applied-objects'] ?? '').map(objectRefKey),
  );
  const { stdout } = await kubectl([
    'get',
    'configmaps,deployments.apps',
    '-n',
    namespace,
    '-l',
    `applyset.kubernetes.io/part-of=${id}`,
    '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.name}{"\\n"}{end}',
  ]);
  for (const line of stdout.split('\n').filter((entry) => entry !== '')) {
    const [kind = '', name = ''] = line.split('/');
    const group = kind === 'Deployment' ? 'apps' : '';
    expect(recorded).toContain(objectRefKey({ group, kind, namespace, name }));
  }
}

describe('a crash between any two steps of the sequence', () => {
  it('then a re-run converges: no orphan, no wrong deletion, the hash written last', async () => {
    let crashAt = 0;
    let stepsSeen: string[] = [];
    for (;;) {
      const ns = uniqueName('crash');
      await createNamespace(adminKubeConfig(), ns);
      const parent = { namespace: ns, name: 'crashy' };
      const dir = await writeSetDirectory({
        'foo.yaml': configMapYaml(ns, 'foo', { version: '1' }),
        'bar.yaml': configMapYaml(ns, 'bar', { version: '1' }),
        'app.yaml': deploymentYaml(ns, 'nginx:1.26'),
      });
      const { client } = countingClient();
      await engineFor(client)(await requestFor(dir, parent));

      const v2 = await writeSetDirectory({
        'foo.yaml': configMapYaml(ns, 'foo', { version: '2' }),
        'baz.yaml': configMapYaml(ns, 'baz', { version: '1' }),
        'app.yaml': deploymentYaml(ns, 'nginx:1.27'),
      });
      const steps: string[] = [];
      const crashing = engineFor(client, {
        afterStep: (step: PlanStep, index: number) => {
          steps.push(
            step.type === 'apply-wave' || step.type === 'prune-wave'
              ? `${step.type}:${step.wave}`
              : step.type,
          );
          if (index === crashAt) throw new InjectedCrash(`crash after step ${index} (${step.type})`);
        },
      });
      const crashed = await crashing(await requestFor(v2, parent)).then(
        () => false,
        (error: unknown) => {
          if (!(error instanceof InjectedCrash)) throw error;
          return true;
        },
      );
      if (!crashed) break;
      stepsSeen = steps;

      // Right after the crash: nothing untracked, and what stays in the set was not deleted.
      await expectNoOrphan(ns);
      expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/foo`)).toBeDefined();
      expect(await getObject(`/apis/apps/v1/namespaces/${ns}/deployments/app`)).toBeDefined();

      const rerun = await engineFor(client)(await requestFor(v2, parent));
      expect(rerun.completed).toBe(true);
      expect(rerun.outcomes.filter((o) => o.action === 'failed' || o.action === 'conflict')).toEqual([]);

      expect((await getObject(`/api/v1/namespaces/${ns}/configmaps/foo`))?.['data']).toEqual({
        version: '2',
      });
      expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/baz`)).toBeDefined();
      expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/bar`)).toBeUndefined();
      const final = await parentOf(ns);
      const inventory = parseInventory(
        annotations(final)['kubectl.kubernetes.io/last-applied-objects'] ?? '',
      );
      expect(inventory.map(objectRefKey)).toEqual([
        `${ns}::ConfigMap:baz`,
        `${ns}::ConfigMap:foo`,
        `${ns}:apps:Deployment:app`,
      ]);
      expect(labels(final)['kubectl.kubernetes.io/apply-hash']).toBe(computeApplyHash(inventory));
      await expectNoOrphan(ns);
      crashAt += 1;
    }
    // Every step of the proposal's sequence was crashed after at least once.
    expect(stepsSeen).toEqual([
      'widen-inventory',
      'apply-wave:dependencies',
      'apply-wave:workloads',
      'prune-wave:dependencies',
      'narrow-inventory',
      'write-hash',
    ]);
    expect(crashAt).toBe(6);
  });
});

import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { parseInventory } from '../../src/inventory/parse-inventory.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import { describeObjectRef } from '../../src/manifests/object-ref.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import {
  adminKubeConfig,
  createNamespace,
  kubeconfigForServiceAccount,
  uniqueName,
} from '../harness/test-cluster.js';
import {
  annotations,
  configMapYaml,
  engineFor,
  eventually,
  getObject,
  kubectl,
  labels,
  requestFor,
  countingClient,
  writeSetDirectory,
} from './apply-test-kit.js';

// Deleting a Namespace deletes everything in it (the namespace controller), and deleting a CRD deletes
// every custom resource of it: a set may prune either only when it holds nothing of others.

const OWNER = 'kubectl.kubernetes.io/apply-owner';
const PART_OF = 'applyset.kubernetes.io/part-of';

function namespaceYaml(name: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
}

function secretYaml(namespace: string, name: string): string {
  return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nstringData:\n  token: b-only\n`;
}

function crdYaml(group: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { kind: Gizmo, plural: gizmos, singular: gizmo }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true }
`;
}

function gizmoYaml(group: string, namespace: string, name: string): string {
  return `apiVersion: ${group}/v1\nkind: Gizmo\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  size: 1\n`;
}

async function applySet(files: Record<string, string>, parent: { namespace: string; name: string }) {
  const { client } = countingClient();
  const result = await engineFor(client)(await requestFor(await writeSetDirectory(files), parent));
  expect(result.outcomes.filter((o) => o.action === 'failed' || o.action === 'conflict')).toEqual([]);
  return result;
}

function byObject(outcomes: readonly ObjectOutcome[]): Record<string, string> {
  return Object.fromEntries(
    outcomes.map((o) => [
      describeObjectRef(o.ref),
      o.action === 'prune-skipped' ? `${o.action}: ${o.reason}` : o.action,
    ]),
  );
}

async function inventoryOf(parent: { namespace: string; name: string }): Promise<string[]> {
  const live = await getObject(`/api/v1/namespaces/${parent.namespace}/configmaps/${parent.name}`);
  const text = annotations(live)['kubectl.kubernetes.io/last-applied-objects'] ?? '';
  return parseInventory(text).map(describeObjectRef);
}

function deletionTimestamp(object: JsonObject | undefined): unknown {
  return (object?.['metadata'] as JsonObject | undefined)?.['deletionTimestamp'];
}

/**
 * Waits until the serviceaccount controller has put the `default` ServiceAccount in the namespace, so
 * the check meets it. The test control plane does not run the root-ca-cert-publisher, so the
 * `kube-root-ca.crt` ConfigMap it would publish in every namespace is created here as it would be.
 */
async function defaultsPresent(namespace: string) {
  await kubectl(['create', 'configmap', 'kube-root-ca.crt', '-n', namespace, '--from-literal=ca.crt=test']);
  await eventually(
    async () => (await getObject(`/api/v1/namespaces/${namespace}/serviceaccounts/default`)) !== undefined,
    `the default ServiceAccount in ${namespace}`,
    60_000,
  );
}

async function freshParents() {
  const parentNamespace = uniqueName('sp-parent');
  await createNamespace(adminKubeConfig(), parentNamespace);
  return {
    parentNamespace,
    a: { namespace: parentNamespace, name: 'set-a' },
    b: { namespace: parentNamespace, name: 'set-b' },
  };
}

describe('pruning a Namespace', () => {
  it('keeps and releases a Namespace holding objects of others, and prunes the set’s own objects in it', async () => {
    const { parentNamespace, a, b } = await freshParents();
    const ns = uniqueName('sp-ns');
    const keep = configMapYaml(parentNamespace, 'a-keep', { k: 'v' });
    await applySet(
      {
        'ns.yaml': namespaceYaml(ns),
        'cm.yaml': configMapYaml(ns, 'a-config', { k: 'v' }),
        'keep.yaml': keep,
      },
      a,
    );
    await applySet({ 'secret.yaml': secretYaml(ns, 'b-secret') }, b);
    await kubectl(['create', 'serviceaccount', 'loner', '-n', ns]);
    await defaultsPresent(ns);

    // A dry run checks too, and says so without writing.
    const { client } = countingClient();
    const request = await requestFor(await writeSetDirectory({ 'keep.yaml': keep }), a, {
      write: { dryRun: true },
    });
    expect(byObject((await engineFor(client)(request)).outcomes)[`namespace/${ns}`]).toBe(
      'prune-skipped: holds 2 objects of others, e.g. secret/b-secret, serviceaccount/loner; would be kept and released from the set',
    );
    expect(annotations(await getObject(`/api/v1/namespaces/${ns}`))[OWNER]).toBeDefined();

    const result = await applySet({ 'keep.yaml': keep }, a);

    const outcomes = byObject(result.outcomes);
    expect(outcomes[`configmap/a-config -n ${ns}`]).toBe('pruned');
    expect(outcomes[`namespace/${ns}`]).toBe(
      'prune-skipped: holds 2 objects of others, e.g. secret/b-secret, serviceaccount/loner; kept and released from the set',
    );
    expect(await getObject(`/api/v1/namespaces/${ns}/configmaps/a-config`)).toBeUndefined();
    const namespace = await getObject(`/api/v1/namespaces/${ns}`);
    expect(deletionTimestamp(namespace)).toBeUndefined();
    expect(annotations(namespace)[OWNER]).toBeUndefined();
    expect(labels(namespace)[PART_OF]).toBeUndefined();
    expect(await getObject(`/api/v1/namespaces/${ns}/secrets/b-secret`)).toBeDefined();
    expect(await getObject(`/api/v1/namespaces/${ns}/serviceaccounts/loner`)).toBeDefined();
    expect(await inventoryOf(a)).toEqual([`configmap/a-keep -n ${parentNamespace}`]);

    // Released: the next run does not judge it again.
    const again = await applySet({ 'keep.yaml': keep }, a);
    expect(byObject(again.outcomes)).toEqual({ [`configmap/a-keep -n ${parentNamespace}`]: 'unchanged' });
    expect(deletionTimestamp(await getObject(`/api/v1/namespaces/${ns}`))).toBeUndefined();
  });

  it('prunes a Namespace holding only the set’s own pruned objects and the control plane’s defaults', async () => {
    const { parentNamespace, a } = await freshParents();
    const ns = uniqueName('sp-ns');
    const keep = configMapYaml(parentNamespace, 'a-keep', { k: 'v' });
    await applySet(
      {
        'ns.yaml': namespaceYaml(ns),
        'cm.yaml': configMapYaml(ns, 'a-config', { k: 'v' }),
        'keep.yaml': keep,
      },
      a,
    );
    await defaultsPresent(ns);

    const result = await applySet({ 'keep.yaml': keep }, a);

    const outcomes = byObject(result.outcomes);
    expect(outcomes[`configmap/a-config -n ${ns}`]).toBe('pruned');
    expect(outcomes[`namespace/${ns}`]).toBe('pruned');
    expect(await inventoryOf(a)).toEqual([`configmap/a-keep -n ${parentNamespace}`]);
    await eventually(
      async () => (await getObject(`/api/v1/namespaces/${ns}`)) === undefined,
      `namespace ${ns} to be gone`,
      90_000,
    );
  });
});

describe('a Namespace whose contents cannot all be listed', () => {
  it('is not pruned and stays in the inventory, judged again next run', async () => {
    const { parentNamespace, a } = await freshParents();
    const ns = uniqueName('sp-ns');
    const keep = configMapYaml(parentNamespace, 'a-keep', { k: 'v' });
    await applySet({ 'ns.yaml': namespaceYaml(ns), 'keep.yaml': keep }, a);
    // An account that may delete Namespaces and write ConfigMaps, but not list Secrets.
    const role = uniqueName('sp-pruner');
    await kubectl([
      'create',
      'clusterrole',
      role,
      '--verb=get,list,create,patch,delete',
      '--resource=namespaces,configmaps',
    ]);
    await kubectl([
      'create',
      'clusterrolebinding',
      role,
      `--clusterrole=${role}`,
      `--serviceaccount=${parentNamespace}:pruner`,
    ]);
    try {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(await kubeconfigForServiceAccount(parentNamespace, 'pruner'));
      const engine = engineFor(createKubeClient({ credentials: createKubeCredentials(kubeConfig) }));
      const result = await engine(await requestFor(await writeSetDirectory({ 'keep.yaml': keep }), a));

      const failed = result.outcomes.find((o) => o.action === 'failed');
      expect(failed?.ref).toMatchObject({ kind: 'Namespace', name: ns });
      expect(failed?.action === 'failed' ? failed.message : '').toMatch(
        new RegExp(
          `^prune refused: cannot tell what namespace/${ns} holds: GET /api/v1/namespaces/${ns}/\\w+: 403 Forbidden`,
        ),
      );
      expect(deletionTimestamp(await getObject(`/api/v1/namespaces/${ns}`))).toBeUndefined();
      expect(annotations(await getObject(`/api/v1/namespaces/${ns}`))[OWNER]).toBeDefined();
      expect(await inventoryOf(a)).toContain(`namespace/${ns}`);
    } finally {
      await kubectl(['delete', 'clusterrolebinding,clusterrole', role, '--ignore-not-found']);
    }
  });
});

describe('pruning a CustomResourceDefinition', () => {
  it('keeps and releases a CRD whose custom resources include another set’s', async () => {
    const { parentNamespace, a, b } = await freshParents();
    const group = `${uniqueName('sp')}.example.test`;
    const keep = configMapYaml(parentNamespace, 'a-keep', { k: 'v' });
    await applySet(
      {
        'crd.yaml': crdYaml(group),
        'gizmo.yaml': gizmoYaml(group, parentNamespace, 'a-gizmo'),
        'keep.yaml': keep,
      },
      a,
    );
    await applySet({ 'gizmo.yaml': gizmoYaml(group, parentNamespace, 'b-gizmo') }, b);

    const result = await applySet({ 'keep.yaml': keep }, a);

    const outcomes = byObject(result.outcomes);
    expect(outcomes[`gizmo.${group}/a-gizmo -n ${parentNamespace}`]).toBe('pruned');
    expect(outcomes[`customresourcedefinition.apiextensions.k8s.io/gizmos.${group}`]).toBe(
      `prune-skipped: holds 1 object of others, e.g. gizmo.${group}/b-gizmo -n ${parentNamespace}; kept and released from the set`,
    );
    const crd = await getObject(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.${group}`);
    expect(deletionTimestamp(crd)).toBeUndefined();
    expect(annotations(crd)[OWNER]).toBeUndefined();
    expect(await getObject(`/apis/${group}/v1/namespaces/${parentNamespace}/gizmos/b-gizmo`)).toBeDefined();
    expect(await inventoryOf(a)).toEqual([`configmap/a-keep -n ${parentNamespace}`]);
  });

  it('prunes a CRD whose only custom resources are the set’s own, pruned in the same run', async () => {
    const { parentNamespace, a } = await freshParents();
    const group = `${uniqueName('sp')}.example.test`;
    const keep = configMapYaml(parentNamespace, 'a-keep', { k: 'v' });
    await applySet(
      {
        'crd.yaml': crdYaml(group),
        'gizmo.yaml': gizmoYaml(group, parentNamespace, 'a-gizmo'),
        'keep.yaml': keep,
      },
      a,
    );

    const result = await applySet({ 'keep.yaml': keep }, a);

    const outcomes = byObject(result.outcomes);
    expect(outcomes[`gizmo.${group}/a-gizmo -n ${parentNamespace}`]).toBe('pruned');
    expect(outcomes[`customresourcedefinition.apiextensions.k8s.io/gizmos.${group}`]).toBe('pruned');
    await eventually(
      async () =>
        (await getObject(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.${group}`)) ===
        undefined,
      `CRD gizmos.${group} to be gone`,
      60_000,
    );
  });
});

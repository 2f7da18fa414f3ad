import type { ObjectOutcome } from '../../src/apply/apply-set-contract.js';
import { PruneLimitExceededError } from '../../src/apply/prune-limit-error.js';
import { describeObjectRef } from '../../src/manifests/object-ref.js';
import { parseInventory } from '../../src/inventory/parse-inventory.js';
import { computeApplyHash } from '../../src/inventory/apply-hash.js';
import { LAST_APPLIED_ANNOTATION } from '../../src/merge/last-applied-configuration.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  annotations,
  countingClient,
  engineFor,
  eventually,
  getObject,
  kubectl,
  labels,
  mixedSetDirectory,
  recordingClient,
  requestFor,
  serverWritesForGroup,
  uidOf,
  configMapYaml,
  writeSetDirectory,
} from './apply-test-kit.js';

/**
 * Applies the set once and returns how many writes it sent to its custom group, once the server's own
 * count holds them all: the server counts a request after answering it, so its count can trail the
 * run's last write for a moment.
 */
async function applySettled(
  set: { dir: string; parent: { namespace: string; name: string } },
  group: string,
) {
  const first = recordingClient();
  await engineFor(first.client)(await requestFor(set.dir, set.parent));
  const writes = first.sent.filter((r) => r.method !== 'GET' && r.path.startsWith(`/apis/${group}/`)).length;
  expect(writes).toBeGreaterThan(0);
  await eventually(
    async () => (await serverWritesForGroup(group)) === writes,
    `the server to count the first run's ${writes} writes to ${group}`,
  );
  return writes;
}

const MIXED_KINDS = [
  'namespace/',
  'customresourcedefinition.apiextensions.k8s.io/',
  'serviceaccount/web',
  'role.rbac.authorization.k8s.io/web-reader',
  'clusterrole.rbac.authorization.k8s.io/',
  'configmap/settings',
  'secret/token',
  'service/web',
  'rolebinding.rbac.authorization.k8s.io/web-reader',
  'deployment.apps/web',
  'gadget.',
];

function lines(outcomes: readonly ObjectOutcome[]): string[] {
  return outcomes.map((outcome) => `${describeObjectRef(outcome.ref)} ${outcome.action}`);
}

/** A fresh mixed set: its own app namespace, CRD group and ClusterRole, and a parent namespace. */
async function freshMixedSet() {
  const appNamespace = uniqueName('mixed');
  const id = uniqueName('t');
  const parentNamespace = uniqueName('parent');
  await createNamespace(adminKubeConfig(), parentNamespace);
  const dir = await mixedSetDirectory(appNamespace, id);
  return {
    appNamespace,
    id,
    parentNamespace,
    dir,
    parent: { namespace: parentNamespace, name: 'mixed-set' },
  };
}

describe('applying a mixed directory to the real control plane', () => {
  it('creates every object in dependency order, CRD before its custom resource, and records the set', async () => {
    const set = await freshMixedSet();
    const { client } = countingClient();
    const result = await engineFor(client)(await requestFor(set.dir, set.parent));

    expect(result.completed).toBe(true);
    expect(result.outcomes.every((outcome) => outcome.action === 'created')).toBe(true);
    const order = lines(result.outcomes);
    expect(order).toHaveLength(11);
    // Every expected kind is there; the Namespace and the CRD come first, the custom resource last.
    for (const prefix of MIXED_KINDS) expect(order.some((line) => line.startsWith(prefix))).toBe(true);
    expect(order[0]).toMatch(/^(namespace|customresourcedefinition)/);
    expect(order[order.length - 1]).toMatch(/^gadget\./);

    const parent = await getObject(`/api/v1/namespaces/${set.parentNamespace}/configmaps/mixed-set`);
    const inventory = parseInventory(annotations(parent)['kubectl.kubernetes.io/last-applied-objects'] ?? '');
    expect(inventory).toHaveLength(11);
    expect(labels(parent)['kubectl.kubernetes.io/apply-cfg']).toBe('true');
    expect(labels(parent)['kubectl.kubernetes.io/apply-hash']).toBe(computeApplyHash(inventory));
    expect(labels(parent)['applyset.kubernetes.io/id']).toMatch(/^applyset-.*-v1$/);
    expect(annotations(parent)['applyset.kubernetes.io/contains-group-kinds']).toContain(
      `Gadget.${set.id}.example.com`,
    );

    const gadget = await getObject(
      `/apis/${set.id}.example.com/v1/namespaces/${set.appNamespace}/gadgets/sprocket`,
    );
    expect(gadget?.['spec']).toEqual({ size: 3, colors: ['red', 'blue'] });
    const deployment = await getObject(`/apis/apps/v1/namespaces/${set.appNamespace}/deployments/web`);
    expect(annotations(deployment)['kubectl.kubernetes.io/apply-owner']).toBe(uidOf(parent));
    expect(labels(deployment)['applyset.kubernetes.io/part-of']).toBe(
      labels(parent)['applyset.kubernetes.io/id'],
    );
    // The last-applied annotation holds what the file says, not our ownership metadata.
    const lastApplied = annotations(deployment)[LAST_APPLIED_ANNOTATION] ?? '';
    expect(lastApplied).toContain('"image":"nginx:1.27"');
    expect(lastApplied).not.toContain('apply-owner');
    expect(lastApplied).not.toContain('part-of');
  });

  it('re-applies as all unchanged with zero write requests', async () => {
    const set = await freshMixedSet();
    const group = `${set.id}.example.com`;
    const serverBefore = await applySettled(set, group);
    const parentBefore = await getObject(`/api/v1/namespaces/${set.parentNamespace}/configmaps/mixed-set`);
    const counted = countingClient();
    // A new engine: nothing cached from the first run.
    const result = await engineFor(counted.client)(await requestFor(set.dir, set.parent));

    expect(result.outcomes.map((outcome) => outcome.action)).toEqual(new Array(11).fill('unchanged'));
    expect(counted.writes()).toBe(0);
    // The custom group is unique to this test: the server's own count for it is exact.
    expect(await serverWritesForGroup(group)).toBe(serverBefore);
    const parentAfter = await getObject(`/api/v1/namespaces/${set.parentNamespace}/configmaps/mixed-set`);
    expect((parentAfter?.['metadata'] as { resourceVersion: string }).resourceVersion).toBe(
      (parentBefore?.['metadata'] as { resourceVersion: string }).resourceVersion,
    );
  });

  it('leaves kubectl apply of the same files with nothing to do: unchanged for every object', async () => {
    const set = await freshMixedSet();
    const group = `${set.id}.example.com`;
    const serverBefore = await applySettled(set, group);

    const { stdout } = await kubectl(['apply', '-R', '-f', set.dir]);

    const printed = stdout.trim().split('\n');
    expect(printed).toHaveLength(11);
    for (const line of printed) expect(line).toMatch(/ unchanged$/);
    expect(await serverWritesForGroup(group)).toBe(serverBefore);
  });

  it('dry-run reads but writes nothing, and reports what would change field by field', async () => {
    const set = await freshMixedSet();
    const counted = countingClient();
    const preview = await engineFor(counted.client)(
      await requestFor(set.dir, set.parent, { write: { dryRun: true } }),
    );
    expect(preview.outcomes.every((outcome) => outcome.action === 'would-create')).toBe(true);
    expect(counted.writes()).toBe(0);
    expect(await getObject(`/api/v1/namespaces/${set.parentNamespace}/configmaps/mixed-set`)).toBeUndefined();
  });

  it('judges a dry run over the prune limit as a real run: the real run stops, the dry run says why', async () => {
    const namespace = uniqueName('prune-limit');
    await createNamespace(adminKubeConfig(), namespace);
    const parent = { namespace, name: 'limited' };
    const cm = (name: string) => configMapYaml(namespace, name, { v: '1' });
    await engineFor(countingClient().client)(
      await requestFor(
        await writeSetDirectory({ 'a.yaml': cm('a'), 'b.yaml': cm('b'), 'c.yaml': cm('c') }),
        parent,
      ),
    );
    const emptied = await writeSetDirectory({ 'a.yaml': cm('a') });
    const limited = { prune: { mode: 'delete', allowEmpty: false, limit: { count: 1 } } } as const;

    const counted = countingClient();
    const dry = await engineFor(counted.client)(
      await requestFor(emptied, parent, { ...limited, write: { dryRun: true } }),
    );
    expect(counted.writes()).toBe(0);
    expect(dry.pruneLimitExceeded).toBeInstanceOf(PruneLimitExceededError);
    expect(dry.pruneLimitExceeded).toMatchObject({
      limit: 1,
      objects: [`configmap/b -n ${namespace}`, `configmap/c -n ${namespace}`],
    });
    expect(dry.outcomes.filter((o) => o.action === 'would-prune')).toHaveLength(2);

    const real = engineFor(counted.client)(await requestFor(emptied, parent, limited));
    await expect(real).rejects.toThrow(dry.pruneLimitExceeded?.message ?? 'a message');
    expect(counted.writes()).toBe(0);
    // Within the limit, neither says anything of it.
    const within = await engineFor(counted.client)(
      await requestFor(emptied, parent, {
        prune: { ...limited.prune, limit: { count: 2 } },
        write: { dryRun: true },
      }),
    );
    expect(within.pruneLimitExceeded).toBeUndefined();
  });
});

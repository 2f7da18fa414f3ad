import { randomBytes } from 'node:crypto';
import type { ApplySetRequest } from '../../src/apply/apply-set-contract.js';
import { formatInventory } from '../../src/inventory/format-inventory.js';
import {
  COMPRESSED_INVENTORY_KEY,
  COMPRESSED_MARKER,
  decodeInventory,
} from '../../src/inventory/inventory-encoding.js';
import { MetadataKeys } from '../../src/inventory/metadata-keys.js';
import { parseInventory } from '../../src/inventory/parse-inventory.js';
import type { ManifestFile } from '../../src/manifests/manifest-limits.js';
import { configMapParent } from '../../src/apply/config-map-parent.js';
import type { PlanStep } from '../../src/plan/plan.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { annotations, countingClient, engineFor, getObject, kubectl } from './apply-test-kit.js';

// Issue #13 point 2: a set of 20,000 objects, past what one plain annotation holds (about 6,000),
// applies, re-applies with no write, shrinks with exactly the removed objects pruned, survives a crash
// between its writes, and goes back to kubectl's plain format once it is small again. A set whose
// record would not fit even compressed is refused before anything is written.

const PLAIN = MetadataKeys.lastAppliedObjects;

class InjectedCrash extends Error {
  override readonly name = 'InjectedCrash';
}

/** `count` ConfigMaps named `cm-<i>` for i in `indexes`, 1,000 documents a file. */
function files(
  namespace: string,
  indexes: readonly number[],
  name = (i: number) => `cm-${i}`,
): ManifestFile[] {
  const result: ManifestFile[] = [];
  for (let start = 0; start < indexes.length; start += 1000) {
    const text = indexes
      .slice(start, start + 1000)
      .map(
        (i) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name(i)}\n  namespace: ${namespace}\ndata:\n  i: "${i}"\n`,
      )
      .join('---\n');
    result.push({ path: `part-${start / 1000}.yaml`, text });
  }
  return result;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

describe('a set of 20,000 objects', () => {
  const namespace = uniqueName('large');
  const counting = countingClient();
  const engine = engineFor(counting.client, { concurrency: 32 });
  const request = (indexes: readonly number[]): ApplySetRequest => ({
    input: {
      files: files(namespace, indexes),
      parent: configMapParent(namespace, 'large-set'),
      defaultNamespace: namespace,
    },
    write: { dryRun: false, force: false, adopt: true },
    prune: { mode: 'delete', allowEmpty: false },
  });
  const parent = () => getObject(`/api/v1/namespaces/${namespace}/configmaps/large-set`);
  const inventoryOf = async () => parseInventory(decodeInventory(annotations(await parent())));
  const liveNames = async () => {
    const { stdout } = await kubectl([
      '-n',
      namespace,
      'get',
      'configmaps',
      '-o',
      'name',
      '--chunk-size=5000',
    ]);
    return new Set(
      stdout
        .split('\n')
        .filter((line) => line.startsWith('configmap/cm-'))
        .map((line) => line.slice('configmap/'.length)),
    );
  };

  beforeAll(async () => {
    await createNamespace(adminKubeConfig(), namespace);
  });

  afterAll(async () => {
    await kubectl(['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
  });

  it('applies, compressing its inventory, and re-applies with no write', async () => {
    const first = await engine(request(range(0, 20_000)));
    expect(first.outcomes.filter((o) => o.action === 'created')).toHaveLength(20_000);
    const stored = annotations(await parent());
    expect(stored[PLAIN]).toBe(COMPRESSED_MARKER);
    expect(stored[COMPRESSED_INVENTORY_KEY]?.length).toBeGreaterThan(0);
    expect(await inventoryOf()).toHaveLength(20_000);

    const writes = counting.writes();
    const again = await engine(request(range(0, 20_000)));
    expect(again.outcomes.every((o) => o.action === 'unchanged')).toBe(true);
    expect(counting.writes() - writes).toBe(0);
  }, 600_000);

  it('shrinks by 10% with exactly those pruned', async () => {
    const result = await engine(request(range(0, 18_000)));
    const pruned = result.outcomes.filter((o) => o.action === 'pruned').map((o) => o.ref.name);
    expect(new Set(pruned)).toEqual(new Set(range(18_000, 20_000).map((i) => `cm-${i}`)));
    expect(await inventoryOf()).toHaveLength(18_000);
    const live = await liveNames();
    expect(live.size).toBe(18_000);
    expect(live.has('cm-17999')).toBe(true);
    expect(live.has('cm-18000')).toBe(false);
  }, 600_000);

  it('converges after a crash between its inventory writes, with no object left out of it', async () => {
    // Drop 1,000 and add 1,000, crashing after the objects were applied, before anything was pruned
    // and before the inventory was narrowed.
    const next = [...range(1_000, 18_000), ...range(20_000, 21_000)];
    const crashing = engineFor(counting.client, {
      concurrency: 32,
      afterStep: (step: PlanStep) => {
        if (step.type === 'apply-wave') throw new InjectedCrash('after the apply wave');
      },
    });
    await expect(crashing(request(next))).rejects.toThrow(InjectedCrash);
    // The widened inventory holds old and new: nothing of ours is unrecorded.
    expect((await inventoryOf()).length).toBe(19_000);
    await engine(request(next));
    const inventory = await inventoryOf();
    expect(inventory).toHaveLength(18_000);
    expect(new Set(inventory.map((ref) => ref.name))).toEqual(await liveNames());
  }, 600_000);

  it('goes back to the plain format kubectl reads once it is small again', async () => {
    await engine(request(range(1_000, 2_000)));
    const stored = annotations(await parent());
    expect(stored[COMPRESSED_INVENTORY_KEY]).toBeUndefined();
    expect(stored[PLAIN]).toBe(formatInventory(await inventoryOf()));
    expect(await inventoryOf()).toHaveLength(1_000);
    expect((await liveNames()).size).toBe(1_000);
  }, 600_000);

  it('refuses, before writing anything, a set whose record would not fit even compressed', async () => {
    const other = uniqueName('toolarge');
    await createNamespace(adminKubeConfig(), other);
    const noise = (i: number) => `n${i}-${randomBytes(100).toString('hex').slice(0, 200)}`;
    const writes = counting.writes();
    await expect(
      engine({
        ...request([]),
        input: {
          files: files(other, range(0, 3_000), noise),
          parent: configMapParent(other, 'too-large'),
          defaultNamespace: other,
        },
      }),
    ).rejects.toThrow(/over the API server's limit of 262144 bytes for all annotations/);
    expect(counting.writes() - writes).toBe(0);
    await kubectl(['delete', 'namespace', other, '--wait=false']);
  }, 600_000);
});

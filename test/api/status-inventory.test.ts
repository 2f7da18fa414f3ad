import {
  inventoryItemId,
  MAX_INVENTORY_BYTES,
  MAX_INVENTORY_ITEMS,
  parseInventoryItemId,
  statusInventory,
} from '../../src/api/status-inventory.js';
import type { ObjectRef } from '../../src/manifests/object-ref.js';

const configMap = (name: string, namespace = 'shop'): ObjectRef => ({
  group: '',
  kind: 'ConfigMap',
  namespace,
  name,
});

describe('inventoryItemId', () => {
  it('writes <namespace>_<name>_<group>_<kind>, as Flux does', () => {
    expect(inventoryItemId({ group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' })).toBe(
      'shop_web_apps_Deployment',
    );
  });

  it('leaves the namespace of a cluster-scoped object and the core group empty', () => {
    expect(inventoryItemId({ group: '', kind: 'Namespace', namespace: '', name: 'shop' })).toBe(
      '_shop__Namespace',
    );
    expect(inventoryItemId(configMap('settings'))).toBe('shop_settings__ConfigMap');
  });

  it('writes a colon of an RBAC name as a double underscore, as cli-utils does', () => {
    expect(
      inventoryItemId({
        group: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        namespace: '',
        name: 'system:auth-delegator',
      }),
    ).toBe('_system__auth-delegator_rbac.authorization.k8s.io_ClusterRole');
  });
});

describe('statusInventory', () => {
  it('lists every held object, sorted by id, without duplicates', () => {
    const inventory = statusInventory([
      { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
      configMap('b'),
      configMap('a'),
      configMap('a'),
      { group: '', kind: 'Namespace', namespace: '', name: 'shop' },
    ]);
    expect(inventory).toEqual({
      items: ['_shop__Namespace', 'shop_a__ConfigMap', 'shop_b__ConfigMap', 'shop_web_apps_Deployment'],
      totalCount: 4,
      truncated: false,
    });
  });

  it('gives the same list whatever order the objects come in', () => {
    const refs = ['c', 'a', 'b'].map((name) => configMap(name));
    expect(statusInventory(refs)).toEqual(statusInventory([...refs].reverse()));
  });

  it('is empty for an empty set', () => {
    expect(statusInventory([])).toEqual({ items: [], totalCount: 0, truncated: false });
  });

  it('caps 10,000 objects at MAX_INVENTORY_ITEMS, counting them all, far below the object size limit', () => {
    const refs = Array.from({ length: 10_000 }, (_, i) => configMap(`config-${String(i).padStart(5, '0')}`));
    const inventory = statusInventory(refs);
    expect(inventory.totalCount).toBe(10_000);
    expect(inventory.truncated).toBe(true);
    expect(inventory.items).toHaveLength(MAX_INVENTORY_ITEMS);
    // The first ids in order: a stable prefix, not an arbitrary sample.
    expect(inventory.items[0]).toBe('shop_config-00000__ConfigMap');
    expect(inventory.items[MAX_INVENTORY_ITEMS - 1]).toBe('shop_config-00999__ConfigMap');
    const bytes = Buffer.byteLength(JSON.stringify(inventory));
    expect(bytes).toBeLessThan(MAX_INVENTORY_BYTES);
    // The API server refuses objects past 1.5 MiB; the whole status.inventory is a small part of it.
    expect(bytes).toBeLessThan(64 * 1024);
  });

  it('caps long names by bytes before the count: the longest ids stay under MAX_INVENTORY_BYTES', () => {
    const longest = (i: number): ObjectRef => ({
      group: `${'g'.repeat(240)}.example.com`,
      kind: 'Widget',
      namespace: 'n'.repeat(63),
      name: `${'x'.repeat(247)}${String(i).padStart(6, '0')}`,
    });
    const inventory = statusInventory(Array.from({ length: 10_000 }, (_, i) => longest(i)));
    expect(inventory.totalCount).toBe(10_000);
    expect(inventory.truncated).toBe(true);
    expect(inventory.items.length).toBeGreaterThan(100);
    expect(inventory.items.length).toBeLessThan(MAX_INVENTORY_ITEMS);
    expect(Buffer.byteLength(JSON.stringify(inventory.items))).toBeLessThanOrEqual(MAX_INVENTORY_BYTES);
  });

  it('is not truncated at exactly MAX_INVENTORY_ITEMS short ids', () => {
    const refs = Array.from({ length: MAX_INVENTORY_ITEMS }, (_, i) => configMap(`c${i}`));
    expect(statusInventory(refs)).toMatchObject({ totalCount: MAX_INVENTORY_ITEMS, truncated: false });
  });
});

describe('parseInventoryItemId', () => {
  const refs: ObjectRef[] = [
    { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
    { group: '', kind: 'Namespace', namespace: '', name: 'shop' },
    configMap('settings'),
    { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'system:auth-delegator' },
    { group: 'rbac.authorization.k8s.io', kind: 'Role', namespace: 'shop', name: 'read_only' },
    { group: 'networking.k8s.io', kind: 'Ingress', namespace: 'shop', name: 'a.b-c' },
  ];

  it.each(refs.map((ref) => [inventoryItemId(ref), ref] as const))(
    'reads %s back as its object',
    (id, ref) => {
      expect(parseInventoryItemId(id)).toEqual(ref);
    },
  );

  it.each(['', 'shop', 'shop_web', 'shop__Deployment', 'shop_web_apps_', 'shop_web_apps'])(
    'refuses %j, which names no object',
    (id) => {
      expect(parseInventoryItemId(id)).toBeUndefined();
    },
  );
});

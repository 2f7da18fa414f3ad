import fc from 'fast-check';
import type { ObjectRef } from '../../src/manifests/object-ref.js';
import { computeApplyHash } from '../../src/inventory/apply-hash.js';
import { formatInventory } from '../../src/inventory/format-inventory.js';
import { differenceInventories, toInventory, unionInventories } from '../../src/inventory/inventory.js';
import { InventoryParseError, parseInventory } from '../../src/inventory/parse-inventory.js';

const ref = (namespace: string, group: string, kind: string, name: string): ObjectRef => ({
  namespace,
  group,
  kind,
  name,
});
const web = ref('shop', 'apps', 'Deployment', 'web');
const settings = ref('shop', '', 'ConfigMap', 'settings');
const shop = ref('', '', 'Namespace', 'shop');
const reader = ref('', 'rbac.authorization.k8s.io', 'ClusterRole', 'reader');

describe('inventory text', () => {
  it('formats one sorted line per object, empty namespace and group where they are', () => {
    expect(formatInventory([web, settings, shop, reader, web])).toBe(
      [
        '::Namespace:shop',
        ':rbac.authorization.k8s.io:ClusterRole:reader',
        'shop::ConfigMap:settings',
        'shop:apps:Deployment:web',
      ].join('\n'),
    );
    expect(formatInventory([])).toBe('');
  });

  it('round-trips', () => {
    const inventory = toInventory([web, settings, shop, reader]);
    expect(parseInventory(formatInventory(inventory))).toEqual(inventory);
  });

  it('tolerates blank lines, CRLF, surrounding spaces and a final newline; sorts and dedupes', () => {
    const text = '\n  shop:apps:Deployment:web  \r\n\r\nshop::ConfigMap:settings\nshop:apps:Deployment:web\n';
    expect(parseInventory(text)).toEqual([settings, web]);
    expect(parseInventory('')).toEqual([]);
    expect(parseInventory('\n\n')).toEqual([]);
  });

  it.each([
    ['shop:apps:Deployment', /line 1 .*found 3 fields/],
    ['shop::ConfigMap:settings\nshop:apps', /line 2 .*found 2 fields/],
    ['web', /line 1 .*found 1 field$/],
    ['shop:apps::web', /line 1 .*the kind is empty/],
    ['shop:apps:Deployment:', /line 1 .*the name is empty/],
  ])('refuses the malformed line in %j', (text, message) => {
    expect(() => parseInventory(text)).toThrow(InventoryParseError);
    expect(() => parseInventory(text)).toThrow(message);
  });
});

// What each part may hold on a real cluster: a namespace is a DNS label, a group a DNS subdomain, a
// kind a CamelCase identifier; a name is at least a DNS subdomain and, for RBAC and other path-segment
// kinds, anything but '/' and '%' (':' very much included).
const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const dnsSubdomain = fc
  .array(dnsLabel, { minLength: 1, maxLength: 4 })
  .map((labels) => labels.join('.'))
  .filter((s) => s.length <= 253);
const kindName = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,30}$/);
const pathSegmentName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 60 })
  .map((s) => s.replace(/[/%\s]/g, ':'))
  .filter((s) => s !== '.' && s !== '..' && s !== '');
const anyRef = fc.record({
  namespace: fc.oneof(fc.constant(''), dnsLabel),
  group: fc.oneof(fc.constant(''), dnsSubdomain),
  kind: kindName,
  name: fc.oneof(dnsSubdomain, pathSegmentName),
});

describe('inventory line format, names with ":"', () => {
  it.each([
    ref('', 'rbac.authorization.k8s.io', 'ClusterRole', 'system:aggregated-metrics-reader'),
    ref('', 'rbac.authorization.k8s.io', 'ClusterRoleBinding', 'resource-metrics:system:auth-delegator'),
    ref('kube-system', 'rbac.authorization.k8s.io', 'RoleBinding', 'system::leader-locking-kube-scheduler'),
    ref(
      '',
      'rbac.authorization.k8s.io',
      'ClusterRole',
      'system:controller:clusterrole-aggregation-controller',
    ),
    ref('', 'rbac.authorization.k8s.io', 'ClusterRole', ':'),
    ref('', 'rbac.authorization.k8s.io', 'ClusterRole', 'trailing:'),
    ref('', '', 'Namespace', 'kube-system'),
  ])('reads %j back whole', (object) => {
    expect(parseInventory(formatInventory([object]))).toEqual([object]);
  });

  it('round-trips any set of refs whose parts are valid on a cluster', () => {
    fc.assert(
      fc.property(fc.array(anyRef, { maxLength: 20 }), (refs) => {
        const inventory = toInventory(refs);
        expect(parseInventory(formatInventory(inventory))).toEqual(inventory);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('inventory sets', () => {
  it('unions and differences', () => {
    const old = toInventory([web, settings]);
    const next = toInventory([web, shop]);
    expect(unionInventories(old, next)).toEqual(toInventory([web, settings, shop]));
    expect(differenceInventories(old, next)).toEqual([settings]);
    expect(differenceInventories(next, old)).toEqual([shop]);
  });

  it('keeps only the identity fields of richer refs', () => {
    const rich = { ...web, version: 'v1' } as ObjectRef;
    expect(toInventory([rich])).toEqual([web]);
  });
});

describe('apply hash', () => {
  it('is a label value that depends on the set only', () => {
    const hash = computeApplyHash([web, settings]);
    expect(hash).toMatch(/^[0-9a-f]{40}$/);
    expect(computeApplyHash([settings, web, web])).toBe(hash);
    expect(computeApplyHash([web])).not.toBe(hash);
    // sha256("") — the empty set has a hash too, so an emptied set still records completion.
    expect(computeApplyHash([])).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4');
  });
});

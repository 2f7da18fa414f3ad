import { computeApplySetId } from '../../src/inventory/applyset-id.js';
import {
  DEFAULT_TOOLING,
  applySetMemberMetadata,
  applySetParentMetadata,
  formatTooling,
} from '../../src/inventory/applyset-metadata.js';
import { formatContainsGroupKinds, parseContainsGroupKinds } from '../../src/inventory/applyset-metadata.js';
import { computeApplyHash } from '../../src/inventory/apply-hash.js';

describe('KEP-3659 ApplySet metadata', () => {
  it('computes the id exactly as kubectl does', () => {
    // The value kubectl's own apply test expects for Secret my-set in namespace test
    // (k8s.io/kubectl/pkg/cmd/apply/apply_test.go), also the example of the well-known labels page.
    expect(computeApplySetId({ name: 'my-set', namespace: 'test', kind: 'Secret', group: '' })).toBe(
      'applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1',
    );
    const id = computeApplySetId({
      name: 'apps',
      namespace: 'flux',
      kind: 'ApplySet',
      group: 'applyset.dev',
    });
    expect(id).toMatch(/^applyset-[A-Za-z0-9_-]{43}-v1$/);
    expect(id.length).toBeLessThanOrEqual(63);
  });

  it('lists group kinds the way kubectl writes them', () => {
    const value = formatContainsGroupKinds([
      { group: 'apps', kind: 'Deployment' },
      { group: '', kind: 'Secret' },
      { group: '', kind: 'ConfigMap' },
      { group: 'cert-manager.io', kind: 'Certificate' },
      { group: 'apps', kind: 'Deployment' },
    ]);
    expect(value).toBe('Certificate.cert-manager.io,ConfigMap,Deployment.apps,Secret');
    expect(parseContainsGroupKinds(value)).toEqual([
      { group: 'cert-manager.io', kind: 'Certificate' },
      { group: '', kind: 'ConfigMap' },
      { group: 'apps', kind: 'Deployment' },
      { group: '', kind: 'Secret' },
    ]);
    expect(formatContainsGroupKinds([])).toBe('');
    expect(parseContainsGroupKinds('')).toEqual([]);
  });

  it('formats tooling as <tool>/<semver>', () => {
    expect(formatTooling('applyset-controller', '0.1.0')).toBe('applyset-controller/v0.1.0');
    expect(formatTooling('applyset-controller', 'v1.2.3')).toBe('applyset-controller/v1.2.3');
    expect(DEFAULT_TOOLING).toBe('applyset-controller/v0.1.0');
  });

  const parent = { name: 'site', namespace: 'ops', kind: 'ConfigMap', group: '' };
  const inventory = [
    { namespace: 'shop', group: 'apps', kind: 'Deployment', name: 'web' },
    { namespace: 'ops', group: '', kind: 'ConfigMap', name: 'settings' },
    { namespace: '', group: '', kind: 'Namespace', name: 'shop' },
  ];

  it('builds the parent labels and annotations from one inventory, the hash only when asked', () => {
    const withoutHash = applySetParentMetadata({
      parent,
      inventory,
      tooling: DEFAULT_TOOLING,
      withHash: false,
    });
    expect(withoutHash).toEqual({
      labels: {
        'kubectl.kubernetes.io/apply-cfg': 'true',
        'applyset.kubernetes.io/id': computeApplySetId(parent),
      },
      annotations: {
        'kubectl.kubernetes.io/last-applied-objects':
          '::Namespace:shop\nops::ConfigMap:settings\nshop:apps:Deployment:web',
        // A small set has no compressed list: the key is removed if a larger set had left one.
        'applyset.dev/last-applied-objects-gzip': null,
        'applyset.kubernetes.io/tooling': 'applyset-controller/v0.1.0',
        'applyset.kubernetes.io/contains-group-kinds': 'ConfigMap,Deployment.apps,Namespace',
        'applyset.kubernetes.io/additional-namespaces': 'shop',
      },
    });
    const withHash = applySetParentMetadata({ parent, inventory, tooling: DEFAULT_TOOLING, withHash: true });
    expect(withHash.labels['kubectl.kubernetes.io/apply-hash']).toBe(computeApplyHash(inventory));
  });

  it('marks members with the owner uid and the part-of label', () => {
    expect(applySetMemberMetadata({ ownerUid: 'uid-1', parent })).toEqual({
      labels: { 'applyset.kubernetes.io/part-of': computeApplySetId(parent) },
      annotations: { 'kubectl.kubernetes.io/apply-owner': 'uid-1' },
    });
  });
});

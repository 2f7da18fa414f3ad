import {
  compareObjectRefs,
  describeObjectRef,
  objectRefKey,
  parseApiVersion,
} from '../../src/manifests/object-ref.js';

describe('object refs', () => {
  it.each([
    ['v1', { group: '', version: 'v1' }],
    ['apps/v1', { group: 'apps', version: 'v1' }],
    ['rbac.authorization.k8s.io/v1', { group: 'rbac.authorization.k8s.io', version: 'v1' }],
    ['a/b/c', undefined],
    ['/v1', undefined],
    ['apps/', undefined],
    ['', undefined],
  ])('parses apiVersion %j', (apiVersion, expected) => {
    expect(parseApiVersion(apiVersion)).toEqual(expected);
  });

  it('formats the inventory key and the kubectl-style description', () => {
    const deployment = { group: 'apps', kind: 'Deployment', namespace: 'prod', name: 'web' };
    const namespace = { group: '', kind: 'Namespace', namespace: '', name: 'prod' };
    expect(objectRefKey(deployment)).toBe('prod:apps:Deployment:web');
    expect(objectRefKey(namespace)).toBe('::Namespace:prod');
    expect(describeObjectRef(deployment)).toBe('deployment.apps/web -n prod');
    expect(describeObjectRef(namespace)).toBe('namespace/prod');
  });

  it('orders by code unit, not locale', () => {
    const upper = { group: '', kind: 'ConfigMap', namespace: 'a', name: 'B' };
    const lower = { group: '', kind: 'ConfigMap', namespace: 'a', name: 'a' };
    expect([lower, upper].sort(compareObjectRefs)).toEqual([upper, lower]);
  });
});

import { mappingsOfResourceList, versionsOfApiGroup } from '../../src/kube/discovery-documents.js';

describe('reading discovery documents', () => {
  it('maps each kind of an APIResourceList to its resource and scope, skipping subresources', () => {
    const byKind = mappingsOfResourceList(
      {
        kind: 'APIResourceList',
        resources: [
          { name: 'deployments', kind: 'Deployment', namespaced: true },
          { name: 'deployments/scale', kind: 'Scale', namespaced: true },
          { name: 'widgets', kind: 'Widget', namespaced: false },
        ],
      },
      'apps',
      'v1',
    );
    expect([...byKind.keys()]).toEqual(['Deployment', 'Widget']);
    expect(byKind.get('Widget')).toEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Widget',
      resource: 'widgets',
      scope: 'Cluster',
    });
  });

  it('lists no kind for a 404 (an empty body) or a body without resources', () => {
    expect(mappingsOfResourceList({}, 'x.example.com', 'v1').size).toBe(0);
    expect(mappingsOfResourceList(null, 'x.example.com', 'v1').size).toBe(0);
  });

  it("lists a group's versions preferred first, then the others in the server's order", () => {
    const versions = versionsOfApiGroup({
      kind: 'APIGroup',
      name: 'widgets.example.com',
      versions: [
        { groupVersion: 'widgets.example.com/v2', version: 'v2' },
        { groupVersion: 'widgets.example.com/v1', version: 'v1' },
        { groupVersion: 'widgets.example.com/v1beta1', version: 'v1beta1' },
      ],
      preferredVersion: { groupVersion: 'widgets.example.com/v1', version: 'v1' },
    });
    expect(versions).toEqual(['v1', 'v2', 'v1beta1']);
  });

  it('lists nothing for a group that is not served, and the listed versions when none is preferred', () => {
    expect(versionsOfApiGroup({})).toEqual([]);
    expect(versionsOfApiGroup({ versions: [{ version: 'v1beta1' }, { version: 'v1alpha1' }] })).toEqual([
      'v1beta1',
      'v1alpha1',
    ]);
  });
});

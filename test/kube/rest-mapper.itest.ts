import { createKubeClient } from '../../src/kube/kube-client.js';
import { UnknownKindError } from '../../src/kube/kube-api-error.js';
import { createRestMapper } from '../../src/kube/rest-mapper.js';
import { adminKubeConfig } from '../harness/test-cluster.js';

function recordingMapper() {
  const paths: string[] = [];
  const client = createKubeClient({
    kubeConfig: adminKubeConfig(),
    onRequest: (_method, path) => paths.push(path),
  });
  return { mapper: createRestMapper(client), paths };
}

describe('REST mapping from discovery', () => {
  it('asks only about the group-versions it is given, once each', async () => {
    const { mapper, paths } = recordingMapper();
    await mapper.load([
      { group: '', version: 'v1' },
      { group: 'apps', version: 'v1' },
      { group: 'apps', version: 'v1' },
    ]);
    expect(await mapper.resolve({ group: 'apps', version: 'v1', kind: 'Deployment' })).toEqual({
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      resource: 'deployments',
      scope: 'Namespaced',
    });
    expect(mapper.scopeResolver().scopeOf({ group: '', version: 'v1', kind: 'Namespace' })).toBe('Cluster');
    expect(paths.sort()).toEqual(['/api/v1', '/apis/apps/v1']);
  });

  it('maps an inventory entry, which has no version, through the group preferred version', async () => {
    const { mapper } = recordingMapper();
    const mapping = await mapper.resolveGroupKind('rbac.authorization.k8s.io', 'ClusterRole');
    expect(mapping).toMatchObject({ version: 'v1', resource: 'clusterroles', scope: 'Cluster' });
  });

  it('names the kind when it is unknown', async () => {
    const { mapper } = recordingMapper();
    await expect(mapper.resolve({ group: 'nope.example.com', version: 'v1', kind: 'Thing' })).rejects.toThrow(
      UnknownKindError,
    );
    await expect(mapper.resolve({ group: 'apps', version: 'v1', kind: 'Deploymnt' })).rejects.toThrow(
      /no kind "Deploymnt" is registered for "apps\/v1"/,
    );
  });
});

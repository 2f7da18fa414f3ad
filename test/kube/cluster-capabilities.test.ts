import { aggregatedApiVersions, kubeVersionOf } from '../../src/kube/cluster-capabilities.js';

describe('a cluster capabilities, as helm install reads them', () => {
  it('lists every group/version and group/version/Kind, subresource kinds under the parent group-version', () => {
    const core = {
      kind: 'APIGroupDiscoveryList',
      items: [
        {
          metadata: {},
          versions: [
            {
              version: 'v1',
              resources: [
                {
                  resource: 'pods',
                  responseKind: { group: '', version: 'v1', kind: 'Pod' },
                  subresources: [
                    {
                      subresource: 'eviction',
                      responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' },
                    },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const apis = {
      kind: 'APIGroupDiscoveryList',
      items: [
        {
          metadata: { name: 'monitoring.coreos.com' },
          versions: [
            {
              version: 'v1',
              resources: [{ resource: 'servicemonitors', responseKind: { kind: 'ServiceMonitor' } }],
            },
          ],
        },
        {
          metadata: { name: 'apps' },
          versions: [
            { version: 'v1', resources: [{ resource: 'deployments', responseKind: { kind: 'Deployment' } }] },
          ],
        },
      ],
    };
    expect(aggregatedApiVersions([core, apis])).toEqual([
      'apps/v1',
      'apps/v1/Deployment',
      'monitoring.coreos.com/v1',
      'monitoring.coreos.com/v1/ServiceMonitor',
      'v1',
      'v1/Eviction',
      'v1/Pod',
    ]);
  });

  it.each([
    [{ major: '1', minor: '33', gitVersion: 'v1.33.13' }, '1.33.13'],
    [{ major: '1', minor: '30+', gitVersion: 'v1.30.2+k3s1' }, '1.30.2+k3s1'],
    [{ major: '1', minor: '29+' }, '1.29.0'],
  ])('takes the version of %j as %s', (body, version) => {
    expect(kubeVersionOf(body)).toBe(version);
  });
});

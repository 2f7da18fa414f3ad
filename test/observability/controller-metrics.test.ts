import { createControllerMetrics, schemaDocumentOf } from '../../src/observability/controller-metrics.js';

describe('requests counted by document', () => {
  it('tells discovery and OpenAPI documents from requests on resources', () => {
    expect(
      ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/apis/applyset.dev/v1alpha1'].map(
        schemaDocumentOf,
      ),
    ).toEqual(Array(6).fill('discovery'));
    expect(['/openapi/v2', '/openapi/v3', '/openapi/v3/apis/apps/v1'].map(schemaDocumentOf)).toEqual(
      Array(3).fill('openapi'),
    );
    expect(
      [
        '/api/v1/configmaps',
        '/api/v1/namespaces/default/configmaps',
        '/apis/apps/v1/deployments',
        '/apis/apps/v1/namespaces/x/deployments/web',
        '/version',
      ].map(schemaDocumentOf),
    ).toEqual(Array(5).fill(undefined));
  });

  it('counts GETs of documents in applyset_kube_schema_requests_total, every request by verb', async () => {
    const metrics = createControllerMetrics();
    metrics.countKubeRequest('GET', '/openapi/v3');
    metrics.countKubeRequest('GET', '/api/v1');
    metrics.countKubeRequest('GET', '/api/v1/namespaces/x/configmaps');
    metrics.countKubeRequest('PATCH', '/api/v1/namespaces/x/configmaps/y');
    const text = await metrics.registry.metrics();
    expect(text).toContain('applyset_kube_schema_requests_total{document="openapi"} 1');
    expect(text).toContain('applyset_kube_schema_requests_total{document="discovery"} 1');
    expect(text).toContain('applyset_kube_requests_total{verb="GET"} 3');
  });
});

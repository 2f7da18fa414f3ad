import {
  boundedClusterLabels,
  createControllerMetrics,
  remoteClusterLabel,
  schemaDocumentOf,
} from '../../src/observability/controller-metrics.js';

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
    expect(text).toContain('applyset_kube_schema_requests_total{cluster="local",document="openapi"} 1');
    expect(text).toContain('applyset_kube_schema_requests_total{cluster="local",document="discovery"} 1');
    expect(text).toContain('applyset_kube_requests_total{cluster="local",verb="GET"} 3');
  });
});

describe('requests counted by cluster', () => {
  it("counts a remote cluster's requests under its host:port, apart from the controller's own", async () => {
    const metrics = createControllerMetrics();
    metrics.countKubeRequest('GET', '/api/v1/namespaces/x/configmaps');
    metrics.countKubeRequest('PATCH', '/api/v1/namespaces/x/configmaps/y', 'https://10.1.2.3:6443');
    metrics.countKubeRequest('PATCH', '/api/v1/namespaces/x/configmaps/z', 'https://10.1.2.3:6443');
    metrics.countKubeRequest('GET', '/openapi/v3', 'https://b.example');
    const text = await metrics.registry.metrics();
    expect(text).toContain('applyset_kube_requests_total{cluster="local",verb="GET"} 1');
    expect(text).toContain('applyset_kube_requests_total{cluster="10.1.2.3:6443",verb="PATCH"} 2');
    expect(text).toContain('applyset_kube_requests_total{cluster="b.example:443",verb="GET"} 1');
    expect(text).toContain(
      'applyset_kube_schema_requests_total{cluster="b.example:443",document="openapi"} 1',
    );
    expect(text).not.toContain('applyset_kube_requests_total{cluster="local",verb="PATCH"}');
  });

  it('names a server by host and port, with its path when a proxy serves several clusters', () => {
    expect(
      [
        'https://b.example',
        'http://b.example',
        'https://b.example:6443/',
        'https://[fd00::1]:6443',
        'https://user:pw@rancher.example/k8s/clusters/c-42/?x=1',
        'not a url',
      ].map(remoteClusterLabel),
    ).toEqual([
      'b.example:443',
      'b.example:80',
      'b.example:6443',
      '[fd00::1]:6443',
      'rancher.example:443/k8s/clusters/c-42',
      undefined,
    ]);
  });

  it('gives the first remote servers a label each and counts any further one under "other"', () => {
    const label = boundedClusterLabels(2);
    expect(label(undefined)).toBe('local');
    expect(label('https://one.example')).toBe('one.example:443');
    expect(label('https://two.example')).toBe('two.example:443');
    expect(label('https://three.example')).toBe('other');
    // A server already labelled keeps its label past the bound; the controller's own is never bounded.
    expect(label('https://one.example:443')).toBe('one.example:443');
    expect(label(undefined)).toBe('local');
  });
});

const web = { namespace: 'shop', name: 'web' };

/** The exposition lines of the series labelled by `web`. */
async function webSeries(metrics: ReturnType<typeof createControllerMetrics>): Promise<string[]> {
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((line) => line.includes('namespace="shop",name="web"'));
}

describe('per-ApplySet metrics', () => {
  it('carries the revision last applied in one info series, replaced when the revision changes', async () => {
    const metrics = createControllerMetrics();
    metrics.setRevision('shop', 'web', 'main@sha1:aaa');
    metrics.setRevision('shop', 'web', 'main@sha1:bbb');
    const info = (await webSeries(metrics)).filter((line) => line.startsWith('applyset_info'));
    expect(info).toEqual(['applyset_info{namespace="shop",name="web",revision="main@sha1:bbb"} 1']);
  });

  it('labels reconcile durations and object counts by ApplySet, result and verb, beside the fleet totals', async () => {
    const metrics = createControllerMetrics();
    metrics.observeReconcile('success', 0.5, web);
    metrics.observeReconcile('success', 1.25, web);
    metrics.countObjects('created', 3, web);
    metrics.countObjects('pruned', 1, web);
    metrics.countObjects('configured', 2);
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'applyset_set_reconcile_duration_seconds_count{namespace="shop",name="web",result="success"} 2',
    );
    expect(text).toContain(
      'applyset_set_reconcile_duration_seconds_sum{namespace="shop",name="web",result="success"} 1.75',
    );
    // Buckets only fleet-wide: per ApplySet they would more than double a fleet's series.
    expect(text).not.toContain('applyset_set_reconcile_duration_seconds_bucket');
    expect(text).toContain('applyset_reconcile_duration_seconds_bucket{le="1",result="success"} 1');
    expect(text).toContain('applyset_set_objects_total{namespace="shop",name="web",verb="created"} 3');
    expect(text).toContain('applyset_set_objects_total{namespace="shop",name="web",verb="pruned"} 1');
    expect(text).toContain('applyset_reconcile_duration_seconds_count{result="success"} 2');
    expect(text).toContain('applyset_objects_total{action="created"} 3');
    expect(text).toContain('applyset_objects_total{action="configured"} 2');
  });

  it('removes every series of a deleted ApplySet, and a last "deleted" reconcile adds none back', async () => {
    const metrics = createControllerMetrics();
    metrics.setReady('shop', 'web', 1);
    metrics.setRevision('shop', 'web', 'main@sha1:aaa');
    metrics.observeReconcile('success', 0.5, web);
    metrics.observeReconcile('retryable', 0.5, web);
    metrics.countObjects('created', 3, web);
    metrics.countDrift('shop', 'web', 1);
    metrics.countFights('shop', 'web', 1);
    metrics.setReady('shop', 'other', 1);
    // Ready, info, a count and a sum per result (2 results), objects, drift, fights.
    expect(await webSeries(metrics)).toHaveLength(9);

    metrics.setReady('shop', 'web', undefined);
    metrics.observeReconcile('deleted', 0.1, web);
    expect(await webSeries(metrics)).toEqual([]);
    expect(await metrics.registry.metrics()).toContain('applyset_ready{namespace="shop",name="other"} 1');
  });
});

describe('the leader gauge', () => {
  it('is 0 until the replica leads, 1 while it leads, 0 again once it stops', async () => {
    const metrics = createControllerMetrics();
    expect(await metrics.registry.metrics()).toContain('\napplyset_leader 0\n');
    metrics.setLeader(true);
    expect(await metrics.registry.metrics()).toContain('\napplyset_leader 1\n');
    metrics.setLeader(false);
    expect(await metrics.registry.metrics()).toContain('\napplyset_leader 0\n');
  });
});

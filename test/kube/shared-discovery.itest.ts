import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { adminKubeConfig, createNamespace, uniqueName } from '../harness/test-cluster.js';

// The controller reads discovery and OpenAPI once, as itself, for every ServiceAccount it impersonates
// (src/controller/runtime/shared-engines.ts). That is only right if the API server gives every user the same
// answers: RBAC decides what a user may do with a resource, not whether discovery or OpenAPI lists it.
// Checked here against the real server, with an account that has no role at all.

describe('discovery and OpenAPI do not depend on who asks', () => {
  const kubeConfig = adminKubeConfig();
  const credentials = createKubeCredentials(kubeConfig);
  const namespace = uniqueName('shared-discovery');
  const admin = createKubeClient({ credentials });
  const nobody = createKubeClient({
    credentials,
    impersonateUser: `system:serviceaccount:${namespace}:nobody`,
  });

  beforeAll(() => createNamespace(kubeConfig, namespace));

  it('answers an account without any role exactly as it answers the admin', async () => {
    // The account may not even list ConfigMaps of its own namespace...
    await expect(
      nobody.request({ method: 'GET', path: `/api/v1/namespaces/${namespace}/configmaps` }),
    ).rejects.toMatchObject({ name: 'KubeApiError', status: 403 });

    // ...yet discovery and OpenAPI are the same for it, byte for byte once decoded.
    const index = await admin.request({ method: 'GET', path: '/openapi/v3' });
    const entry = (index as { paths: Record<string, { serverRelativeURL: string }> }).paths['api/v1'];
    expect(entry).toBeDefined();
    const v1Document = new URL(entry?.serverRelativeURL ?? '', 'http://server.invalid');
    const documents = [
      { path: '/api/v1' },
      { path: '/apis/apps/v1' },
      { path: '/apis/rbac.authorization.k8s.io' },
      { path: '/openapi/v3' },
      { path: v1Document.pathname, query: Object.fromEntries(v1Document.searchParams) },
    ];
    for (const document of documents) {
      const asAdmin = await admin.request({ method: 'GET', ...document });
      const asNobody = await nobody.request({ method: 'GET', ...document });
      expect(asNobody).toEqual(asAdmin);
    }
  });
});

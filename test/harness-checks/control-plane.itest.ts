import * as k8s from '@kubernetes/client-node';
import {
  adminKubeConfig,
  createNamespace,
  kubeconfigForServiceAccount,
  uniqueName,
} from '../harness/test-cluster.js';

/** Waits for a condition with a deadline; never a fixed sleep. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function statusCode(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}

async function getJson(kc: k8s.KubeConfig, path: string): Promise<unknown> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('no cluster');
  const options: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, cluster.server), options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(JSON.parse(body))
          : reject(new Error(`${path}: HTTP ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the local control plane', () => {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);

  it('reports the Kubernetes release it was built from', async () => {
    const version = (await getJson(kc, '/version')) as { gitVersion: string; major: string; minor: string };
    expect(version.gitVersion).toMatch(/^v1\.(3[3-9]|[4-9]\d)\.\d+$/);
    expect(Number(version.minor)).toBeGreaterThanOrEqual(33);
  });

  it('creates a Namespace, a ConfigMap and a Deployment', async () => {
    const ns = uniqueName('found');
    await createNamespace(kc, ns);
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'cfg' }, data: { a: '1' } },
    });
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('web') });
    const cm = await core.readNamespacedConfigMap({ namespace: ns, name: 'cfg' });
    expect(cm.data).toEqual({ a: '1' });
    const dep = await apps.readNamespacedDeployment({ namespace: ns, name: 'web' });
    expect(dep.spec?.template.spec?.containers[0]?.image).toBe('registry.k8s.io/pause:3.10');
  });

  it('serves the patch strategy of PodSpec.containers in OpenAPI v2 and v3', async () => {
    const v2 = (await getJson(kc, '/openapi/v2')) as {
      definitions: Record<string, { properties?: Record<string, Record<string, unknown>> }>;
    };
    const v2Containers = v2.definitions['io.k8s.api.core.v1.PodSpec']?.properties?.containers;
    expect(v2Containers?.['x-kubernetes-patch-strategy']).toBe('merge');
    expect(v2Containers?.['x-kubernetes-patch-merge-key']).toBe('name');

    const index = (await getJson(kc, '/openapi/v3')) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const coreV1 = index.paths['api/v1'];
    expect(coreV1).toBeDefined();
    const v3 = (await getJson(kc, coreV1?.serverRelativeURL ?? '')) as {
      components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
    };
    const v3Containers = v3.components.schemas['io.k8s.api.core.v1.PodSpec']?.properties?.containers;
    expect(v3Containers?.['x-kubernetes-patch-strategy']).toBe('merge');
    expect(v3Containers?.['x-kubernetes-patch-merge-key']).toBe('name');
  });

  it('deletes a Namespace completely (the namespace controller runs)', async () => {
    const ns = uniqueName('gone');
    await createNamespace(kc, ns);
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'inside' } } });
    await core.deleteNamespace({ name: ns });
    await eventually(`namespace ${ns} to disappear`, async () => {
      try {
        await core.readNamespace({ name: ns });
        return false;
      } catch (error) {
        if (statusCode(error) === 404) return true;
        throw error;
      }
    });
  });

  it('completes a Foreground deletion of a Deployment with a dependent (the garbage collector runs)', async () => {
    const ns = uniqueName('gc');
    await createNamespace(kc, ns);
    const dep = await apps.createNamespacedDeployment({ namespace: ns, body: deployment('fg') });
    // A dependent that names the Deployment as its owner, as a ReplicaSet would.
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'fg',
              uid: dep.metadata?.uid ?? '',
              blockOwnerDeletion: true,
            },
          ],
        },
      },
    });
    await apps.deleteNamespacedDeployment({
      namespace: ns,
      name: 'fg',
      body: { propagationPolicy: 'Foreground' },
    });
    await eventually('the Deployment and its dependent to be gone', async () => {
      const [depGone, cmGone] = await Promise.all([
        apps.readNamespacedDeployment({ namespace: ns, name: 'fg' }).then(
          () => false,
          (e: unknown) => statusCode(e) === 404,
        ),
        core.readNamespacedConfigMap({ namespace: ns, name: 'dependent' }).then(
          () => false,
          (e: unknown) => statusCode(e) === 404,
        ),
      ]);
      return depGone && cmGone;
    });
  });

  it('gives a ServiceAccount with a namespaced Role 403 outside its namespace', async () => {
    const home = uniqueName('sa-home');
    const other = uniqueName('sa-other');
    await createNamespace(kc, home);
    await createNamespace(kc, other);
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: home,
      body: {
        metadata: { name: 'configmaps' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: home,
      body: {
        metadata: { name: 'configmaps' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmaps' },
        subjects: [{ kind: 'ServiceAccount', name: 'limited', namespace: home }],
      },
    });
    const saKc = new k8s.KubeConfig();
    saKc.loadFromFile(await kubeconfigForServiceAccount(home, 'limited'));
    const saCore = saKc.makeApiClient(k8s.CoreV1Api);
    await saCore.createNamespacedConfigMap({ namespace: home, body: { metadata: { name: 'allowed' } } });
    await expect(
      saCore.createNamespacedConfigMap({ namespace: other, body: { metadata: { name: 'denied' } } }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(saCore.listNamespacedConfigMap({ namespace: other })).rejects.toMatchObject({ code: 403 });
  });
});

function deployment(name: string): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}

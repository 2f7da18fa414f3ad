import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import { startRegistryTokenServer, type RegistryTokenServer } from '../harness/registry-token-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { createApplySetWithSpec } from './create-applyset-with-spec.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  installCrd,
  startController,
  stopAllControllers,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';

// The controller pulling from the real distribution registry run with token authentication, its token
// service on another port: the pull Secret naming the registry and the token service applies a signed
// artifact; one naming the registry alone stalls, naming the token service's host as the one it lacks.

describe('ApplySets of OCI artifacts behind a token service', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-oci-token');
  let tools: OciTools;
  let tokens: RegistryTokenServer;
  let registry: OciRegistry;
  const reader = { username: 'puller', password: 'pull-secret-9' };
  const pusher = { username: 'release', password: 'push-secret-9' };

  const pullSecret = async (name: string, hosts: readonly string[]) => {
    const auths = Object.fromEntries(hosts.map((host) => [host, reader]));
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': JSON.stringify({ auths }) },
      },
    });
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    tools = await startOciTools();
    tokens = await startRegistryTokenServer({
      users: {
        [reader.username]: { password: reader.password, pull: ['team/app'] },
        [pusher.username]: { password: pusher.password, pull: ['*'], push: ['*'] },
      },
    });
    registry = await startOciRegistry({ token: tokens.registryAuth });
    await tools.login(registry.host, pusher);
    await pullSecret('pull', [registry.host, tokens.host]);
    await pullSecret('registry-only', [registry.host]);
    await startController({ namespace });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await registry?.stop();
    await tokens?.close();
    await tools?.cleanup();
  });

  it('applies a signed artifact with a token bought with the pull Secret, and names the host it lacks', async () => {
    const signer = await tools.generateKeyPair();
    await c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'cosign-keys' }, stringData: { 'ci.pub': signer.publicKey } },
    });
    const digest = await tools.pushArtifact(`${registry.host}/team/app:v1`, {
      'deploy/t.yaml': configMapYaml('oci-token', { pulled: 'with-a-token' }),
    });
    await tools.sign(`${registry.host}/team/app@${digest}`, signer);
    const source = (secret: string) => ({
      source: {
        insecure: true,
        url: `oci://${registry.host}/team/app`,
        ref: { tag: 'v1' },
        path: 'deploy',
        secretRef: { name: secret },
        verify: { provider: 'cosign', secretRef: { name: 'cosign-keys' } },
      },
    });
    await createApplySetWithSpec(c, namespace, 'token', { url: 'unused' }, source('pull'));
    const applied = (v: ApplySetView) => v.status?.lastAppliedRevision === `v1@${digest}`;
    await waitForReady(c, namespace, 'token', 'True', applied, 60_000);
    expect(await configMapData(c, namespace, 'oci-token')).toEqual({ pulled: 'with-a-token' });

    await createApplySetWithSpec(c, namespace, 'registry-only', { url: 'unused' }, source('registry-only'));
    const view = await waitForReady(
      c,
      namespace,
      'registry-only',
      'False',
      (v) => condition(v, 'Stalled')?.reason === 'AuthenticationFailed',
      60_000,
    );
    expect(condition(view, 'Ready')?.message).toContain(
      `${tokens.host} asks for credentials, and spec.source.secretRef names none for ${tokens.host}`,
    );
  });
});

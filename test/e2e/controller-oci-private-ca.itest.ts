import { readFile } from 'node:fs/promises';
import { helmBinary } from '../harness/helm-binary.js';
import { startHelmRepository, type HelmRepository } from '../harness/helm-repository.js';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.js';
import { startOciTools, type OciTools } from '../harness/oci-tools.js';
import {
  privateCertificateAuthority,
  type PrivateCertificateAuthority,
} from '../harness/private-certificate-authority.js';
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

// Issue #37: OCI registries whose certificate an internal CA signed, the real distribution registry over
// its own HTTPS (and mTLS), the artifact pushed by the real oras. Without the CA the set says which
// certificate failed and why; with `ca.crt` in spec.source.certSecretRef's Secret, or in the pull
// Secret itself, it is applied; a registry that requires a client certificate gets `tls.crt`/`tls.key`,
// and without them the set says the registry refused the client certificate, naming that Secret. A Helm
// repository of another CA (not in NODE_EXTRA_CA_CERTS) is read with `ca.crt` of its secretRef Secret.

describe('OCI registries of a private certificate authority, through the controller', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-oci-private-ca');
  let authority: PrivateCertificateAuthority;
  let tools: OciTools;
  let https: OciRegistry;
  let mutual: OciRegistry;
  let charts: HelmRepository;

  const secret = (name: string, stringData: Record<string, string>, type?: string) =>
    c.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name }, ...(type === undefined ? {} : { type }), stringData },
    });
  const ociSet = (name: string, registry: OciRegistry, path: string, source: object = {}) =>
    createApplySetWithSpec(
      c,
      namespace,
      name,
      { url: 'unused' },
      { source: { url: `oci://${registry.host}/team/app`, ref: { tag: 'v1' }, path, ...source } },
    );
  const failedWith = (name: string, reason: string) =>
    waitForReady(c, namespace, name, 'False', (view) => condition(view, 'Ready')?.reason === reason, 60_000);
  const message = (view: ApplySetView) => condition(view, 'Ready')?.message ?? '';

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    authority = await privateCertificateAuthority();
    tools = await startOciTools();
    [https, mutual] = await Promise.all([
      startOciRegistry({ tls: { authority } }),
      startOciRegistry({ tls: { authority, mutual: true } }),
    ]);
    await tools.trust(https.host, { ca: authority.ca });
    await tools.trust(mutual.host, { ca: authority.ca, client: authority.client });
    const files = {
      'cert-ref/cm.yaml': configMapYaml('oci-cert-ref', { via: 'certSecretRef' }),
      'pull-secret/cm.yaml': configMapYaml('oci-pull-secret', { via: 'pull Secret ca.crt' }),
      'mtls/cm.yaml': configMapYaml('oci-mtls', { via: 'tls.crt' }),
    };
    await Promise.all([
      tools.pushArtifact(`${https.host}/team/app:v1`, files),
      tools.pushArtifact(`${mutual.host}/team/app:v1`, files),
    ]);
    await secret('registry-ca', { 'ca.crt': authority.ca });
    await secret('registry-client', {
      'ca.crt': authority.ca,
      'tls.crt': authority.client.cert,
      'tls.key': authority.client.key,
    });
    // A pull Secret as `kubectl create secret docker-registry` writes it, with the CA beside it.
    await secret(
      'pull',
      { '.dockerconfigjson': JSON.stringify({ auths: {} }), 'ca.crt': authority.ca },
      'kubernetes.io/dockerconfigjson',
    );
    charts = await startHelmRepository();
    await charts.addChart('web', {
      'Chart.yaml': 'apiVersion: v2\nname: web\nversion: 1.0.0\n',
      'templates/cm.yaml': configMapYaml('{{ .Release.Name }}-chart', { via: 'helm secretRef ca.crt' }),
    });
    // Only the CA, no username and password: a repository that needs no credentials.
    await secret('charts-ca', { 'ca.crt': await readFile(charts.caFile, 'utf8') });
    await startController({ namespace, env: { APPLYSET_HELM_BINARY: await helmBinary() } });
  }, 180_000);

  afterAll(async () => {
    await stopAllControllers();
    await Promise.all([https?.stop(), mutual?.stop(), charts?.close()]);
    await tools?.cleanup();
  });

  it("says the registry's certificate is not trusted without ca.crt, and what to do", async () => {
    await ociSet('untrusted', https, 'cert-ref');
    const view = await failedWith('untrusted', 'CertificateUntrusted');
    expect(message(view)).toMatch(
      /TLS to 127\.0\.0\.1:\d+ failed: the server's certificate is not signed by a trusted certificate authority \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: /,
    );
    expect(message(view)).toContain(
      'ca.crt of a Secret named by spec.source.secretRef or spec.source.certSecretRef',
    );
    expect(await configMapData(c, namespace, 'oci-cert-ref')).toBeUndefined();
  });

  it('applies the artifact with the CA as ca.crt of spec.source.certSecretRef', async () => {
    await ociSet('cert-ref', https, 'cert-ref', { certSecretRef: { name: 'registry-ca' } });
    await waitForReady(c, namespace, 'cert-ref', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'oci-cert-ref')).toEqual({ via: 'certSecretRef' });
  });

  it('applies the artifact with the CA as ca.crt of the pull Secret', async () => {
    await ociSet('pull-secret', https, 'pull-secret', { secretRef: { name: 'pull' } });
    await waitForReady(c, namespace, 'pull-secret', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'oci-pull-secret')).toEqual({ via: 'pull Secret ca.crt' });
  });

  it('presents tls.crt and tls.key to a registry that requires a client certificate', async () => {
    await ociSet('mtls', mutual, 'mtls', { certSecretRef: { name: 'registry-client' } });
    await waitForReady(c, namespace, 'mtls', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'oci-mtls')).toEqual({ via: 'tls.crt' });
  });

  it('says the registry refused the client certificate, naming the certSecretRef Secret', async () => {
    await ociSet('no-client-cert', mutual, 'mtls', {
      secretRef: { name: 'pull' },
      certSecretRef: { name: 'registry-ca' },
    });
    const view = await failedWith('no-client-cert', 'ClientCertificateRefused');
    expect(message(view)).toContain('tls.crt and tls.key of Secret registry-ca (spec.source.certSecretRef)');
  });

  it("reads a Helm repository's chart with ca.crt of its secretRef Secret", async () => {
    const helmSet = (name: string, source: object) =>
      createApplySetWithSpec(
        c,
        namespace,
        name,
        { url: 'unused' },
        { source: { url: charts.url, ...source }, helm: { chart: 'web' } },
      );
    await helmSet('chart-untrusted', {});
    await failedWith('chart-untrusted', 'CertificateUntrusted');
    await helmSet('chart', { secretRef: { name: 'charts-ca' } });
    await waitForReady(c, namespace, 'chart', 'True', () => true, 60_000);
    expect(await configMapData(c, namespace, 'chart-chart')).toEqual({ via: 'helm secretRef ca.crt' });
  });
});

import { runShippedCli } from '../harness/shipped-cli.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import {
  privateCertificateAuthority,
  type PrivateCertificateAuthority,
} from '../harness/private-certificate-authority.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  installCrd,
  startController,
  stopAllControllers,
  waitForReady,
} from './e2e-kit.js';

// Issue #37: a self-hosted Git server whose certificate an internal CA signed. Without the CA the set
// says which certificate failed and why; with `ca.crt` in its Secret it is applied; a server that
// requires a client certificate (mTLS) gets the Secret's `tls.crt`/`tls.key`, and without them the set
// says the server refused the client certificate.

describe('Git servers of a private certificate authority, through the controller', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-private-ca');
  let authority: PrivateCertificateAuthority;
  let https: GitTestServer;
  let mutual: GitTestServer;

  const secret = (name: string, stringData: Record<string, string>) =>
    c.core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData } });

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    authority = await privateCertificateAuthority();
    https = await startGitServer({
      files: { 'cm.yaml': configMapYaml('over-tls', { via: 'ca.crt' }) },
      tls: authority.server,
    });
    mutual = await startGitServer({
      files: { 'cm.yaml': configMapYaml('over-mtls', { via: 'tls.crt' }) },
      tls: { ...authority.server, clientCa: authority.ca },
    });
    await secret('ca-only', { 'ca.crt': authority.ca });
    await secret('client-cert', {
      'ca.crt': authority.ca,
      'tls.crt': authority.client.cert,
      'tls.key': authority.client.key,
    });
    await startController({ namespace });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await https?.close();
    await mutual?.close();
  });

  it("says the server's certificate is not trusted without ca.crt, and what to do", async () => {
    await createApplySet(c, namespace, 'untrusted', { url: https.url });
    const view = await waitForReady(
      c,
      namespace,
      'untrusted',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'CertificateUntrusted',
    );
    expect(condition(view, 'Ready')?.message).toMatch(
      /TLS to 127\.0\.0\.1:\d+ failed: the server's certificate is not signed by a trusted certificate authority \(UNABLE_TO_VERIFY_LEAF_SIGNATURE.*ca\.crt/,
    );
  });

  it('applies the repository with the CA as ca.crt of the Secret', async () => {
    await createApplySet(c, namespace, 'trusted', { url: https.url, secretName: 'ca-only' });
    await waitForReady(c, namespace, 'trusted', 'True');
    expect(await configMapData(c, namespace, 'over-tls')).toEqual({ via: 'ca.crt' });
  });

  it('presents tls.crt and tls.key to a server that requires a client certificate', async () => {
    await createApplySet(c, namespace, 'mutual', { url: mutual.url, secretName: 'client-cert' });
    await waitForReady(c, namespace, 'mutual', 'True');
    expect(await configMapData(c, namespace, 'over-mtls')).toEqual({ via: 'tls.crt' });
  });

  it('previews the mTLS set with the CLI, as users run it, through the same Secret', async () => {
    await mutual.writeFiles({ 'cm.yaml': configMapYaml('over-mtls', { via: 'next' }) }, { branch: 'next' });
    const preview = await runShippedCli(
      [
        'diff',
        '--applyset-object',
        'mutual',
        '-n',
        namespace,
        '--ref',
        'next',
        '--allowed-source-hosts',
        '127.0.0.1',
      ],
      {
        ...process.env,
        KUBECONFIG: adminKubeconfigPath(),
      },
    );
    // Exit 1: the preview found changes, as kubectl diff says so.
    expect(preview.code).toBe(1);
    expect(preview.stdout).toContain(`~ configmap/over-mtls -n ${namespace}`);
    expect(preview.stdout).toContain('data.via: "tls.crt" → "next"');
  });

  it('says the server refused the client certificate when the Secret has none', async () => {
    await createApplySet(c, namespace, 'no-client-cert', { url: mutual.url, secretName: 'ca-only' });
    const view = await waitForReady(
      c,
      namespace,
      'no-client-cert',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'ClientCertificateRefused',
    );
    expect(condition(view, 'Ready')?.message).toContain('tls.crt and tls.key of Secret');
  });
});

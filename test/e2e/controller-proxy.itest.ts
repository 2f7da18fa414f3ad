import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { privateCertificateAuthority } from '../harness/private-certificate-authority.js';
import { runShippedCli } from '../harness/shipped-cli.js';
import { adminKubeconfigPath, createNamespace, uniqueName } from '../harness/test-cluster.js';
import { startTinyproxy, type Tinyproxy } from '../harness/tinyproxy.js';
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
} from './e2e-kit.js';

// Issue #37: a controller whose only way out is an HTTP proxy. With HTTPS_PROXY in its environment its
// Git fetches go through a real CONNECT proxy (Debian's tinyproxy), whose log shows the tunnel, TLS
// spoken inside it with the server of a private CA (spec.source.certSecretRef's ca.crt). An ApplySet's own
// spec.source.proxySecretRef takes another proxy that wants credentials: with them it is applied through
// that proxy, without them the set says the proxy wants some.

const proxyUser = { username: 'team-a', password: 'pr0xy-s3cret' };

describe('the controller behind an HTTP proxy', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-proxy');
  let git: GitTestServer;
  let operatorProxy: Tinyproxy;
  let tenantProxy: Tinyproxy;
  let gitHost: string;

  const secret = (name: string, stringData: Record<string, string>) =>
    c.core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData } });
  // Each set its own directory: two sets may not apply the same object.
  const create = (name: string, path: string, source: object) =>
    createApplySetWithSpec(
      c,
      namespace,
      name,
      { url: git.url },
      { source: { url: git.url, ref: { branch: 'main' }, path, ...source } },
    );

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    const authority = await privateCertificateAuthority();
    git = await startGitServer({
      files: {
        'env/cm.yaml': configMapYaml('via-env', { via: 'HTTPS_PROXY' }),
        'secret/cm.yaml': configMapYaml('via-secret', { via: 'proxySecretRef' }),
      },
      tls: authority.server,
    });
    gitHost = new URL(git.url).host;
    const connectPorts = [Number(new URL(git.url).port)];
    operatorProxy = await startTinyproxy({ connectPorts });
    tenantProxy = await startTinyproxy({ connectPorts, auth: proxyUser });
    await secret('git-ca', { 'ca.crt': authority.ca });
    await secret('proxy', { address: tenantProxy.url, ...proxyUser });
    await secret('proxy-without-credentials', { address: tenantProxy.url });
    await startController({ namespace, env: { HTTPS_PROXY: operatorProxy.url } });
  }, 120_000);

  afterAll(async () => {
    await stopAllControllers();
    await operatorProxy?.stop();
    await tenantProxy?.stop();
    await git?.close();
  });

  it("fetches through HTTPS_PROXY's tunnel, and the proxy's log shows the CONNECT", async () => {
    await create('through-env', 'env', { certSecretRef: { name: 'git-ca' } });
    await waitForReady(c, namespace, 'through-env', 'True');
    expect(await configMapData(c, namespace, 'via-env')).toEqual({ via: 'HTTPS_PROXY' });
    expect(await operatorProxy.connects()).toContain(gitHost);
  });

  it("previews the set with the CLI through the user's own HTTPS_PROXY, as users run it", async () => {
    const userProxy = await startTinyproxy({ connectPorts: [Number(new URL(git.url).port)] });
    try {
      await git.writeFiles({ 'env/cm.yaml': configMapYaml('via-env', { via: 'next' }) }, { branch: 'next' });
      const preview = await runShippedCli(
        [
          'diff',
          '--applyset-object',
          'through-env',
          '-n',
          namespace,
          '--ref',
          'next',
          '--allowed-source-hosts',
          '127.0.0.1',
        ],
        { ...process.env, KUBECONFIG: adminKubeconfigPath(), HTTPS_PROXY: userProxy.url, NO_PROXY: '' },
      );
      // Exit 1: the preview found changes, as kubectl diff says so.
      expect(preview.code).toBe(1);
      expect(preview.stdout).toContain('data.via: "HTTPS_PROXY" → "next"');
      expect(await userProxy.connects()).toContain(gitHost);
    } finally {
      await userProxy.stop();
    }
  });

  it("fetches through the ApplySet's proxySecretRef with its credentials", async () => {
    const before = (await operatorProxy.connects()).length;
    await create('through-secret', 'secret', {
      certSecretRef: { name: 'git-ca' },
      proxySecretRef: { name: 'proxy' },
    });
    await waitForReady(c, namespace, 'through-secret', 'True');
    expect(await configMapData(c, namespace, 'via-secret')).toEqual({ via: 'proxySecretRef' });
    expect(await tenantProxy.connects()).toContain(gitHost);
    // The set's proxy, not the controller's, carried this one: the operator's saw no new tunnel.
    expect((await operatorProxy.connects()).length).toBe(before);
  });

  it('says the proxy wants credentials when its Secret has none', async () => {
    await create('proxy-refused', 'secret', {
      certSecretRef: { name: 'git-ca' },
      proxySecretRef: { name: 'proxy-without-credentials' },
    });
    const view = await waitForReady(
      c,
      namespace,
      'proxy-refused',
      'False',
      (v) => condition(v, 'Ready')?.reason === 'ProxyRefused',
    );
    expect(condition(view, 'Ready')?.message).toContain(
      `the proxy ${new URL(tenantProxy.url).host} answered 407 to CONNECT ${gitHost}`,
    );
  });
});

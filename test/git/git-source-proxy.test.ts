/**
 * The Git source through a real CONNECT proxy (Debian's tinyproxy) in front of a real HTTPS Git server of
 * a private CA: the operator's HTTPS_PROXY, NO_PROXY, and a tenant's proxy with credentials.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGitSource } from '../../src/git/git-source.js';
import { outboundProxyOf } from '../../src/net/outbound-proxy.js';
import { proxyEnvironmentOf } from '../../src/net/proxy-environment.js';
import { ProxyRefusedError } from '../../src/net/proxy-refused-error.js';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { privateCertificateAuthority } from '../harness/private-certificate-authority.js';
import { startTinyproxy, type Tinyproxy } from '../harness/tinyproxy.js';

const files = { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n' };
const proxyUser = { username: 'fetcher', password: 'pr0xy-pass' };

describe('the Git source through a proxy', () => {
  let ca: string;
  let git: GitTestServer;
  let open: Tinyproxy;
  let guarded: Tinyproxy;
  let cacheDir: string;

  beforeAll(async () => {
    const authority = await privateCertificateAuthority();
    ca = authority.ca;
    git = await startGitServer({ files, tls: authority.server });
    const connectPorts = [Number(new URL(git.url).port)];
    open = await startTinyproxy({ connectPorts });
    guarded = await startTinyproxy({ connectPorts, auth: proxyUser });
  });

  afterAll(async () => {
    await open?.stop();
    await guarded?.stop();
    await git?.close();
  });

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'git-source-proxy-test-'));
  });

  afterEach(() => rm(cacheDir, { recursive: true, force: true }));

  const source = (env: Record<string, string>) =>
    createGitSource({ cacheDir, allowedHosts: ['127.0.0.1'], proxies: proxyEnvironmentOf(env) });
  const target = () => new URL(git.url).host;

  it("fetches through HTTPS_PROXY's CONNECT tunnel, TLS checked end to end with the CA", async () => {
    const fetched = await source({ HTTPS_PROXY: open.url }).fetch({
      url: git.url,
      ref: { branch: 'main' },
      tls: { ca },
    });
    expect(fetched.commit).toBe(await git.revParse('main'));
    expect(await open.connects()).toContain(target());
  });

  it('goes direct to a host NO_PROXY names', async () => {
    const before = (await open.connects()).length;
    await source({ HTTPS_PROXY: open.url, NO_PROXY: 'localhost,127.0.0.1' }).fetch({
      url: git.url,
      ref: { branch: 'main' },
      tls: { ca },
    });
    expect((await open.connects()).length).toBe(before);
  });

  it("sends a tenant's proxy its credentials, and says when the proxy wants some", async () => {
    const gitSource = source({});
    const request = { url: git.url, ref: { branch: 'main' }, tls: { ca } } as const;
    const refused = await gitSource
      .fetch({ ...request, proxy: outboundProxyOf(new URL(guarded.url), true) })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProxyRefusedError);
    expect((refused as Error).message).toBe(
      `the proxy ${new URL(guarded.url).host} answered 407 to CONNECT ${target()}: it wants credentials (username and password of the proxy Secret)`,
    );
    const fetched = await gitSource.fetch({
      ...request,
      proxy: outboundProxyOf(new URL(guarded.url), true, proxyUser),
    });
    expect(fetched.commit).toBe(await git.revParse('main'));
    expect(await guarded.connects()).toContain(target());
  });
});

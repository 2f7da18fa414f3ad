import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGitServer, type GitTestServer } from '../harness/git-server.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import {
  applySetBody,
  cluster,
  condition,
  configMapData,
  configMapYaml,
  createApplySet,
  GROUP,
  installCrd,
  kubectl,
  PLURAL,
  stopAllControllers,
  VERSION,
  waitForReady,
  type ApplySetView,
} from './e2e-kit.js';
import {
  DEFAULT_ACCOUNT,
  coreRule,
  createTenantAccount,
  startLockedDownController,
  type LockedDownController,
} from './locked-down-controller.js';

// Where the controller fetches from and where Git credentials go, with the lockdown flags on: a metadata
// address, a host outside --allowed-source-hosts, a Secret that does not name the host, a Secret that names
// none, and a redirect to another origin. Each one stalls with a reason naming the host, and the real Git
// server behind it never receives an Authorization header it was not meant to. The controller runs as
// the chart installs it locked down, with gitSources.allowedHosts=[127.0.0.1].

const PASSWORD = 'n0t-f0r-th1s-h0st';
const credentials = { username: 'deploy', password: PASSWORD };

describe('the controller under a source policy', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-source');
  const closers: (() => Promise<void>)[] = [];
  let controller: LockedDownController | undefined;

  /** A Git server behind basic auth whose one ConfigMap is named `name` (each ApplySet its own). */
  const serve = async (name = 'from-git'): Promise<GitTestServer> => {
    const server = await startGitServer({
      files: { 'cm.yaml': configMapYaml(name, { k: 'v' }) },
      auth: credentials,
    });
    closers.push(() => server.close());
    return server;
  };

  const createSecret = async (name: string, hosts: string | undefined) => {
    await c.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: {
          name,
          ...(hosts === undefined ? {} : { annotations: { 'applyset.dev/source-hosts': hosts } }),
        },
        stringData: credentials,
      },
    });
  };

  const stalled = async (name: string, reason: string): Promise<ApplySetView> => {
    const view = await waitForReady(
      c,
      namespace,
      name,
      'False',
      (v) => condition(v, 'Stalled')?.status === 'True',
    );
    expect(condition(view, 'Stalled')?.reason).toBe(reason);
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
    return view;
  };

  beforeAll(async () => {
    await installCrd();
    await createNamespace(c.kc, namespace);
    // The Git credentials Secrets are read as the account: it may get them (by name, no list).
    await createTenantAccount(c, namespace, DEFAULT_ACCOUNT, [
      coreRule('configmaps'),
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    controller = await startLockedDownController({
      namespace,
      values: { 'gitSources.allowedHosts[0]': '127.0.0.1' },
    });
    expect(controller.args).toEqual(expect.arrayContaining(['--allowed-source-hosts', '127.0.0.1']));
    // Secrets must name their hosts: the controller's default, no flag needed.
    expect(controller.args).not.toContain('--apply-as-controller');
  });

  afterAll(async () => {
    await stopAllControllers();
    await Promise.all(closers.map((close) => close()));
    await controller?.cleanup();
  });

  it('refuses a cloud metadata address and a metadata host name', async () => {
    await createApplySet(c, namespace, 'metadata-ip', { url: 'http://169.254.169.254/latest/x.git' });
    const byAddress = await stalled('metadata-ip', 'SourceNotAllowed');
    expect(condition(byAddress, 'Ready')?.message).toBe(
      'source http://169.254.169.254/latest/x.git is not allowed: 169.254.169.254 is a link-local (cloud metadata) address',
    );
    await createApplySet(c, namespace, 'metadata-name', { url: 'http://metadata.google.internal/x.git' });
    const byName = await stalled('metadata-name', 'SourceNotAllowed');
    expect(condition(byName, 'Ready')?.message).toContain(
      'metadata.google.internal is a cloud metadata host name',
    );
  });

  it('refuses a host outside --allowed-source-hosts, naming it', async () => {
    const git = await serve();
    const port = new URL(git.url).port;
    await createApplySet(c, namespace, 'outside', { url: `http://localhost:${port}/repo.git` });
    const view = await stalled('outside', 'SourceNotAllowed');
    expect(condition(view, 'Ready')?.message).toContain(
      `localhost:${port} is not among the allowed source hosts (127.0.0.1)`,
    );
    expect(git.requests).toEqual([]);
  });

  it('cannot even create a file:// source: the API server refuses it', async () => {
    const error: unknown = await c.custom
      .createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        body: applySetBody(namespace, 'file-url', { url: 'file:///etc/repo.git' }),
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 422 });
    expect(String((error as { body?: unknown }).body)).toContain('spec.source.url');
  });

  it('sends no credentials to a host their Secret does not name', async () => {
    const git = await serve();
    await createSecret('for-other-host', 'git.example.com');
    await createApplySet(c, namespace, 'other-host', { url: git.url, secretName: 'for-other-host' });
    const view = await stalled('other-host', 'CredentialsNotForHost');
    expect(condition(view, 'Ready')?.message).toBe(
      `credentials not sent to ${git.url}: Secret ${namespace}/for-other-host is for git.example.com (annotation applyset.dev/source-hosts), not ${new URL(git.url).host}`,
    );
    expect(git.requests.filter((request) => request.authorization)).toEqual([]);
    expect(git.requests).toEqual([]);
  });

  it('refuses a Secret that names no hosts, and applies once it names this one, without waiting for the interval', async () => {
    const git = await serve();
    await createSecret('unscoped', undefined);
    await createApplySet(c, namespace, 'unscoped', { url: git.url, secretName: 'unscoped', interval: '10m' });
    const view = await stalled('unscoped', 'CredentialsNotForHost');
    expect(condition(view, 'Ready')?.message).toContain(
      `Secret ${namespace}/unscoped names no hosts (annotation applyset.dev/source-hosts), which this controller requires`,
    );
    expect(git.requests).toEqual([]);

    // The interval is ten minutes: only the controller's polling of the Secrets of failing ApplySets can
    // make this quick.
    await kubectl(['-n', namespace, 'annotate', 'secret', 'unscoped', 'applyset.dev/source-hosts=127.0.0.1']);
    await waitForReady(c, namespace, 'unscoped', 'True');
    expect(await configMapData(c, namespace, 'from-git')).toEqual({ k: 'v' });
    expect(git.requests.some((request) => request.user === 'deploy')).toBe(true);
  });

  it('notices a Secret created right after the ApplySet that names it', async () => {
    const git = await serve('late');
    await createApplySet(c, namespace, 'late-secret', { url: git.url, secretName: 'late', interval: '10m' });
    await stalled('late-secret', 'SecretNotFound');
    await createSecret('late', '127.0.0.1');
    await waitForReady(c, namespace, 'late-secret', 'True');
    expect(await configMapData(c, namespace, 'late')).toEqual({ k: 'v' });
  });

  it('never carries credentials across a redirect to another origin', async () => {
    const git = await serve();
    const requests: { authorization: boolean }[] = [];
    // Another port of the same host: a different origin, where simple-get alone would have kept the header.
    const front = http.createServer((req, res) => {
      requests.push({ authorization: req.headers.authorization !== undefined });
      req.resume();
      res.writeHead(307, { Location: `${new URL(git.url).origin}${req.url ?? '/'}` });
      res.end();
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          front.close(() => resolve());
          front.closeAllConnections();
        }),
    );
    const frontPort = (front.address() as AddressInfo).port;
    const frontUrl = `http://127.0.0.1:${frontPort}/repo.git`;
    await createSecret('for-front', `127.0.0.1:${frontPort}`);
    await createApplySet(c, namespace, 'redirected', { url: frontUrl, secretName: 'for-front' });

    const view = await stalled('redirected', 'CredentialsNotForHost');
    expect(condition(view, 'Ready')?.message).toBe(
      `credentials not sent to ${frontUrl}: a request carrying them was redirected to ${new URL(git.url).origin}, another origin than http://127.0.0.1:${frontPort}; use that URL in spec.source.url`,
    );
    // The credentials went to the host their Secret names, and no further.
    expect(requests.some((request) => request.authorization)).toBe(true);
    expect(git.requests.length).toBeGreaterThan(0);
    expect(git.requests.filter((request) => request.authorization)).toEqual([]);
  });
});

/**
 * Our credentials against the real API server: a static token, a tokenFile rewritten while the client
 * runs, an exec plugin (cached until it expires, run again on a 401), the in-cluster config of a
 * pod, and the errors of a failing plugin. SelfSubjectReview tells who each request was.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials, type KubeCredentialOptions } from '../../src/kube/kube-credentials.js';
import { currentClusterOf } from '../../src/kube/kubeconfig-model.js';
import { kubeUserAgent } from '../../src/kube/user-agent.js';
import { contextNamespace, KubeConfigError, loadKubeConfig } from '../../src/kube/load-kube-config.js';
import { isJsonObject } from '../../src/manifests/json-value.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  clientCertificateFor,
  clientCertificatesAccepted,
  createNamespace,
  uniqueName,
} from '../harness/test-cluster.js';

const namespace = uniqueName('credentials');
const admin = () => createKubeClient({ credentials: createKubeCredentials(adminKubeConfig()) });
let dir: string;
const tokens: Record<'alpha' | 'beta' | 'gamma', string> = { alpha: '', beta: '', gamma: '' };
const sa = (name: string) => `system:serviceaccount:${namespace}:${name}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-credentials-'));
  await createNamespace(adminKubeConfig(), namespace);
  for (const name of ['alpha', 'beta', 'gamma'] as const) tokens[name] = await serviceAccountToken(name);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A token of the ServiceAccount `name` (created) from the TokenRequest API. */
async function serviceAccountToken(name: string): Promise<string> {
  const accounts = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  await admin().request({
    method: 'POST',
    path: accounts,
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }),
  });
  const answer = await admin().request({
    method: 'POST',
    path: `${accounts}/${name}/token`,
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }),
  });
  const status = isJsonObject(answer) ? answer['status'] : undefined;
  const token = isJsonObject(status) ? status['token'] : undefined;
  if (typeof token !== 'string') throw new Error(`no token for ${name}`);
  return token;
}

/** Who the API server says the client is. */
async function whoAmI(client: KubeClient): Promise<string> {
  const review = await client.request({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  const status = isJsonObject(review) ? review['status'] : undefined;
  const userInfo = isJsonObject(status) ? status['userInfo'] : undefined;
  return isJsonObject(userInfo) ? String(userInfo['username']) : '';
}

/** The test cluster's server and CA (PEM). */
function clusterOfAdmin(): { server: string; caPem: string } {
  const cluster = currentClusterOf(adminKubeConfig());
  if (cluster?.caData === undefined) throw new Error('the admin kubeconfig has no CA data');
  return { server: cluster.server, caPem: Buffer.from(cluster.caData, 'base64').toString('utf8') };
}

/** Writes a kubeconfig for the test cluster whose one user is `user`; returns its path. */
async function kubeconfigWith(name: string, user: Record<string, unknown>): Promise<string> {
  const { server, caPem } = clusterOfAdmin();
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'c', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace } }],
    'current-context': 'x',
  };
  const path = join(dir, name, 'config');
  await mkdir(join(dir, name), { recursive: true });
  await writeFile(path, dump(config));
  return path;
}

/** A client from the kubeconfig file, with a clock the test moves. */
function clientOf(path: string, clock: { offset: number }): KubeClient {
  const options: KubeCredentialOptions = { now: () => Date.now() + clock.offset };
  return createKubeClient({
    credentials: createKubeCredentials(loadKubeConfig({}, path).kubeConfig, options),
  });
}

describe('kube credentials against the API server', () => {
  it('sends the static token of the admin kubeconfig', async () => {
    const client = createKubeClient({
      credentials: createKubeCredentials(loadKubeConfig({}, adminKubeconfigPath()).kubeConfig),
    });
    const name = await whoAmI(client);
    expect(name).not.toBe('');
    expect(name).not.toMatch(/^system:(anonymous|serviceaccount:)/);
  });

  it('names its program in the User-Agent: the manager of what a write without fieldManager sets', async () => {
    const configMap = (name: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const managerOf = (answer: unknown) =>
      (answer as { metadata: { managedFields: { manager: string }[] } }).metadata.managedFields[0]?.manager;
    expect(managerOf(await admin().request({ method: 'POST', path, body: configMap('by-cli') }))).toBe(
      'applyset',
    );
    const controller = createKubeClient({
      credentials: createKubeCredentials(adminKubeConfig(), {
        userAgent: kubeUserAgent('applyset-controller'),
      }),
    });
    expect(
      managerOf(await controller.request({ method: 'POST', path, body: configMap('by-controller') })),
    ).toBe('applyset-controller');
  });

  it('authenticates with a client certificate', async () => {
    // Not skipped: a reused control plane started before it took client certificates fails here.
    if (!clientCertificatesAccepted()) {
      throw new Error(
        'this control plane takes no client certificates: restart it (npm run cluster:down, cluster:up)',
      );
    }
    const { cert, key } = await clientCertificateFor('applyset-cert-user', ['team-a']);
    await mkdir(join(dir, 'client-cert'), { recursive: true });
    await writeFile(join(dir, 'client-cert', 'client.crt'), cert);
    // The certificate from a file relative to the kubeconfig, the key inline.
    const path = await kubeconfigWith('client-cert', {
      'client-certificate': 'client.crt',
      'client-key-data': Buffer.from(key).toString('base64'),
    });
    expect(await whoAmI(clientOf(path, { offset: 0 }))).toBe('applyset-cert-user');
  });

  it('reads a tokenFile again once its cache period passed', async () => {
    const clock = { offset: 0 };
    // A relative tokenFile is relative to the kubeconfig.
    const path = await kubeconfigWith('token-file', { tokenFile: 'token' });
    await writeFile(join(dir, 'token-file', 'token'), `${tokens.alpha}\n`);
    const client = clientOf(path, clock);
    expect(await whoAmI(client)).toBe(sa('alpha'));
    await writeFile(join(dir, 'token-file', 'token'), tokens.beta);
    clock.offset = 30_000;
    expect(await whoAmI(client)).toBe(sa('alpha'));
    clock.offset = 61_000;
    expect(await whoAmI(client)).toBe(sa('beta'));
  });
});

/** The plugin: the n-th run prints the n-th token of TOKENS (the last one after), valid an hour. */
const PLUGIN = `
const { appendFileSync, existsSync, readFileSync } = require('node:fs');
const log = process.env.RUN_LOG;
const runs = existsSync(log) ? readFileSync(log, 'utf8').split('\\n').filter(Boolean).length : 0;
appendFileSync(log, 'run\\n');
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
const tokens = JSON.parse(readFileSync(process.env.TOKENS, 'utf8'));
const expirationTimestamp = new Date(Date.now() + 3600 * 1000).toISOString();
console.log(JSON.stringify({
  apiVersion: info.apiVersion,
  kind: 'ExecCredential',
  status: { token: tokens[Math.min(runs, tokens.length - 1)], expirationTimestamp },
}));
`;

describe('an exec credential plugin', () => {
  async function plugin(name: string, tokenList: readonly string[]) {
    const script = join(dir, `${name}.cjs`);
    const log = join(dir, `${name}.log`);
    const list = join(dir, `${name}.json`);
    await writeFile(script, PLUGIN);
    await writeFile(list, JSON.stringify(tokenList));
    const path = await kubeconfigWith(name, {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [script],
        env: [
          { name: 'RUN_LOG', value: log },
          { name: 'TOKENS', value: list },
        ],
        interactiveMode: 'Never',
      },
    });
    const runs = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    return { path, runs };
  }

  it('runs once for many requests, and again once its token expired', async () => {
    const clock = { offset: 0 };
    const { path, runs } = await plugin('exec-expiry', [tokens.alpha, tokens.beta]);
    const client = clientOf(path, clock);
    const names = await Promise.all([whoAmI(client), whoAmI(client), whoAmI(client)]);
    expect(names).toEqual([sa('alpha'), sa('alpha'), sa('alpha')]);
    expect(await whoAmI(client)).toBe(sa('alpha'));
    expect(await runs()).toBe(1);
    clock.offset = 3601 * 1000;
    expect(await whoAmI(client)).toBe(sa('beta'));
    expect(await runs()).toBe(2);
  });

  it('runs again when the server answers 401 to its token, and retries the request once', async () => {
    const { path, runs } = await plugin('exec-401', ['not-a-valid-token', tokens.gamma]);
    const client = clientOf(path, { offset: 0 });
    expect(await whoAmI(client)).toBe(sa('gamma'));
    expect(await runs()).toBe(2);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a command not found, with its install hint',
      { command: 'applyset-no-such-plugin', installHint: 'install it with: brew install nothing' },
      /user "u" of kubeconfig .*exec-fail-0.*: exec plugin "applyset-no-such-plugin" cannot be run \(not found\)\ninstall it with: brew install nothing/,
    ],
    [
      'a non-zero exit, with the tail of its stderr',
      {
        command: process.execPath,
        args: ['-e', 'console.error("login expired, run sso login"); process.exit(3)'],
      },
      /exec plugin ".*" exited with code 3: login expired, run sso login/,
    ],
    [
      'an answer that is not JSON',
      { command: process.execPath, args: ['-e', 'console.log("hello")'] },
      /exec plugin printed no ExecCredential JSON/,
    ],
  ])('fails clearly on %s', async (_name, exec, message) => {
    const index = ['applyset-no-such-plugin', 'login', 'hello'].findIndex((word) =>
      JSON.stringify(exec).includes(word),
    );
    const path = await kubeconfigWith(`exec-fail-${index}`, {
      exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', ...exec },
    });
    const client = clientOf(path, { offset: 0 });
    const failure = whoAmI(client);
    await expect(failure).rejects.toThrow(KubeConfigError);
    await expect(whoAmI(client)).rejects.toThrow(message);
  });
});

describe('the in-cluster config', () => {
  let root: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    const { server, caPem } = clusterOfAdmin();
    root = join(dir, 'serviceaccount');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'token'), tokens.gamma);
    await writeFile(join(root, 'ca.crt'), caPem);
    await writeFile(join(root, 'namespace'), `${namespace}\n`);
    const url = new URL(server);
    env = {
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port,
      HOME: join(dir, 'home'),
    };
  });

  it('is used with no kubeconfig: the service account token, CA and namespace', async () => {
    const loaded = loadKubeConfig(env, undefined, undefined, { serviceAccountRoot: root });
    expect(loaded.context).toBe('in-cluster');
    expect(contextNamespace(loaded.kubeConfig)).toBe(namespace);
    expect(await whoAmI(createKubeClient({ credentials: createKubeCredentials(loaded.kubeConfig) }))).toBe(
      sa('gamma'),
    );
  });

  it('comes before ~/.kube/config for the controller, after it for the CLI', async () => {
    const home = join(dir, 'home-with-config');
    await mkdir(join(home, '.kube'), { recursive: true });
    await writeFile(
      join(home, '.kube', 'config'),
      await readFile(await kubeconfigWith('home', { token: tokens.alpha })),
    );
    const withHome = { ...env, HOME: home };
    const options = { serviceAccountRoot: root };
    const controller = loadKubeConfig(withHome, undefined, undefined, { ...options, inCluster: 'first' });
    expect(
      await whoAmI(createKubeClient({ credentials: createKubeCredentials(controller.kubeConfig) })),
    ).toBe(sa('gamma'));
    const cli = loadKubeConfig(withHome, undefined, undefined, options);
    expect(await whoAmI(createKubeClient({ credentials: createKubeCredentials(cli.kubeConfig) }))).toBe(
      sa('alpha'),
    );
    // KUBECONFIG comes before the pod's config for both.
    const listed = loadKubeConfig(
      { ...env, KUBECONFIG: join(home, '.kube', 'config') },
      undefined,
      undefined,
      {
        ...options,
        inCluster: 'first',
      },
    );
    expect(listed.context).toBe('x');
  });
});

/**
 * What createKubeCredentials makes of a kubeconfig user and cluster: the agent's TLS options (client
 * certificates against the API server: kube-credentials.itest.ts), the request headers of each kind
 * of credential, the refusals, and the lazy auth-provider path.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKubeConnection } from '../../src/kube/kube-connection.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import type { KubeConfig, KubeConfigCluster, KubeConfigUser } from '../../src/kube/kubeconfig-model.js';
import { KubeConfigError, loadKubeConfig } from '../../src/kube/load-kube-config.js';
import { kubeUserAgent } from '../../src/kube/user-agent.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-credentials-unit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const b64 = (text: string) => Buffer.from(text).toString('base64');

function configOf(user: Partial<KubeConfigUser>, cluster: Partial<KubeConfigCluster> = {}): KubeConfig {
  return {
    clusters: [{ name: 'c', server: 'https://c.example:6443/', ...cluster }],
    users: [{ name: 'u', source: '/home/me/.kube/config', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  };
}

describe('createKubeCredentials', () => {
  it('builds the TLS options from inline data', () => {
    const credentials = createKubeCredentials(
      configOf(
        { certData: b64('CERT'), keyData: b64('KEY') },
        { caData: b64('CA'), skipTLSVerify: true, tlsServerName: 'inner.example' },
      ),
    );
    expect(credentials.server).toBe('https://c.example:6443');
    expect(credentials.tls).toEqual({
      ca: 'CA',
      cert: 'CERT',
      key: 'KEY',
      rejectUnauthorized: false,
      servername: 'inner.example',
    });
  });

  it('reads certificate files named relative to the kubeconfig', async () => {
    await writeFile(join(dir, 'ca.crt'), 'CA FILE');
    await writeFile(join(dir, 'client.crt'), 'CERT FILE');
    await writeFile(join(dir, 'client.key'), 'KEY FILE');
    const file = join(dir, 'config');
    await writeFile(
      file,
      [
        'clusters:',
        '- {name: c, cluster: {server: "https://c.example", certificate-authority: ca.crt}}',
        'users:',
        '- {name: u, user: {client-certificate: client.crt, client-key: ./client.key}}',
        'contexts:',
        '- {name: x, context: {cluster: c, user: u}}',
        'current-context: x',
      ].join('\n'),
    );
    const credentials = createKubeCredentials(loadKubeConfig({}, file).kubeConfig);
    expect(credentials.tls).toEqual({ ca: 'CA FILE', cert: 'CERT FILE', key: 'KEY FILE' });
    expect(await credentials.headers()).toEqual({});
  });

  it.each<[string, Partial<KubeConfigUser>, Partial<KubeConfigCluster>, RegExp]>([
    [
      'a missing client certificate file',
      { certFile: '/nowhere/client.crt', keyData: b64('KEY') },
      {},
      /user "u" of kubeconfig \/home\/me\/.kube\/config: client-certificate \/nowhere\/client.crt cannot be read: ENOENT/,
    ],
    [
      'a client key without its certificate',
      { keyData: b64('KEY') },
      {},
      /user "u" of kubeconfig .* has a client key without its pair/,
    ],
    [
      'a proxy-url',
      {},
      { proxyUrl: 'http://proxy:3128', source: '/k' },
      /cluster "c" of kubeconfig \/k: proxy-url is not supported/,
    ],
    [
      'impersonation',
      { impersonationFields: ['as', 'as-groups'] },
      {},
      /impersonation \(as, as-groups\) is not supported/,
    ],
    ['a cluster with no server', {}, { server: '' }, /cluster "c" has no server/],
    [
      'an exec apiVersion of no known version',
      { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'x' } },
      {},
      /exec apiVersion "client.authentication.k8s.io\/v1alpha1" is not/,
    ],
  ])('refuses %s with a KubeConfigError', (_name, user, cluster, message) => {
    expect(() => createKubeCredentials(configOf(user, cluster))).toThrow(KubeConfigError);
    expect(() => createKubeCredentials(configOf(user, cluster))).toThrow(message);
  });

  it.each<[string, Partial<KubeConfigUser>, Record<string, string>]>([
    ['a token', { token: 'abc' }, { authorization: 'Bearer abc' }],
    ['basic auth', { username: 'bob', password: 'pw' }, { authorization: `Basic ${b64('bob:pw')}` }],
    ['no credential', {}, {}],
  ])('sends %s', async (_name, user, headers) => {
    expect(await createKubeCredentials(configOf(user)).headers()).toEqual(headers);
  });

  it('a tokenFile that cannot be read names the user and file', async () => {
    const credentials = createKubeCredentials(configOf({ tokenFile: join(dir, 'no-token') }));
    await expect(credentials.headers()).rejects.toThrow(
      /user "u" of kubeconfig .*: tokenFile .*no-token cannot be read: ENOENT/,
    );
  });

  it('keeps the last token when a tokenFile cannot be read again', async () => {
    const file = join(dir, 'rotating-token');
    await writeFile(file, 'first\n');
    let now = 0;
    const credentials = createKubeCredentials(configOf({ tokenFile: file }), { now: () => now });
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer first' });
    await rm(file);
    now = 120_000;
    expect(await credentials.headers()).toEqual({ authorization: 'Bearer first' });
  });

  it('hands an auth-provider user to @kubernetes/client-node', async () => {
    // An OIDC id-token that expires in 2100: client-node's provider sends it as it is.
    const jwt = [
      b64(JSON.stringify({ alg: 'none', typ: 'JWT' })),
      b64(JSON.stringify({ exp: 4102444800, sub: 'me' })),
      'sig',
    ]
      .join('.')
      .replace(/=+/g, '');
    const authProvider = { name: 'oidc', config: { 'id-token': jwt, 'client-id': 'kubectl' } };
    const credentials = createKubeCredentials(configOf({ authProvider }));
    expect(await credentials.headers()).toEqual({ authorization: `Bearer ${jwt}` });
  });
});

describe('createKubeConnection', () => {
  it('shares one credentials object between the connections made with it', async () => {
    const log = join(dir, 'shared-runs.log');
    const script = [
      `require('node:fs').appendFileSync(${JSON.stringify(log)}, 'run\\n');`,
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',`,
      `status: { token: 'from-plugin' } }));`,
    ].join(' ');
    const config = configOf({
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: ['-e', script],
      },
    });
    // Made once, as the composition root makes them, and passed to both.
    const credentials = createKubeCredentials(config);
    const [lease, reconciles] = [
      createKubeConnection({ credentials }),
      createKubeConnection({ credentials }),
    ];
    const headers = { authorization: 'Bearer from-plugin', 'user-agent': kubeUserAgent('applyset') };
    expect((await lease.options()).headers).toEqual(headers);
    expect((await reconciles.options()).headers).toEqual(headers);
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    // The two keep agents of their own.
    expect((await lease.options()).agent).not.toBe((await reconciles.options()).agent);
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { currentClusterOf, currentUserOf } from '../../src/kube/kubeconfig-model.js';
import { contextNamespace, KubeConfigError, loadKubeConfig } from '../../src/kube/load-kube-config.js';

// kubectl is the reference: `kubectl config view --minify` shows the cluster, user and namespace
// kubectl would use for the same KUBECONFIG and --context; no cluster is needed for that.

const execFileAsync = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-kubeconfig-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Entry {
  readonly cluster?: { name: string; server: string; ca?: string };
  readonly user?: { name: string; token: string };
  readonly context?: { name: string; cluster: string; user: string; namespace?: string };
  readonly current?: string;
}

async function kubeconfigFile(name: string, entries: readonly Entry[]): Promise<string> {
  const lines = ['apiVersion: v1', 'kind: Config'];
  const clusters = entries.flatMap((e) => (e.cluster === undefined ? [] : [e.cluster]));
  const users = entries.flatMap((e) => (e.user === undefined ? [] : [e.user]));
  const contexts = entries.flatMap((e) => (e.context === undefined ? [] : [e.context]));
  lines.push('clusters:');
  for (const c of clusters) {
    lines.push(`- name: ${c.name}`, '  cluster:', `    server: ${c.server}`);
    if (c.ca !== undefined) lines.push(`    certificate-authority: ${c.ca}`);
  }
  lines.push('users:');
  for (const u of users) lines.push(`- name: ${u.name}`, '  user:', `    token: ${u.token}`);
  lines.push('contexts:');
  for (const c of contexts) {
    lines.push(`- name: ${c.name}`, '  context:', `    cluster: ${c.cluster}`, `    user: ${c.user}`);
    if (c.namespace !== undefined) lines.push(`    namespace: ${c.namespace}`);
  }
  const current = entries.find((e) => e.current !== undefined)?.current;
  if (current !== undefined) lines.push(`current-context: ${current}`);
  const path = join(dir, name);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `${lines.join('\n')}\n`);
  return path;
}

/** What kubectl would use: server, token and namespace of the current context. */
async function kubectlView(kubeconfigEnv: string, context?: string) {
  const { stdout } = await execFileAsync(
    'kubectl',
    [
      'config',
      'view',
      '--minify',
      '--raw',
      '-o',
      'json',
      ...(context === undefined ? [] : ['--context', context]),
    ],
    { env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfigEnv } },
  );
  const view = JSON.parse(stdout) as {
    clusters: { cluster: { server: string } }[];
    users: { user: { token: string } }[];
    contexts: { context: { namespace?: string } }[];
  };
  return {
    server: view.clusters[0]?.cluster.server,
    token: view.users[0]?.user.token,
    namespace: view.contexts[0]?.context.namespace ?? 'default',
  };
}

function ours(kubeconfigEnv: string, context?: string) {
  const { kubeConfig } = loadKubeConfig({ KUBECONFIG: kubeconfigEnv, HOME: dir }, undefined, context);
  return {
    server: currentClusterOf(kubeConfig)?.server,
    token: currentUserOf(kubeConfig)?.token,
    namespace: contextNamespace(kubeConfig),
  };
}

describe('loadKubeConfig merges KUBECONFIG as kubectl does', () => {
  let first: string;
  let second: string;
  beforeAll(async () => {
    first = await kubeconfigFile('first/config', [
      { cluster: { name: 'shared', server: 'https://first.example:6443' } },
      { user: { name: 'shared', token: 'first-token' } },
      { context: { name: 'a', cluster: 'shared', user: 'shared', namespace: 'from-first' } },
      { current: 'a' },
    ]);
    second = await kubeconfigFile('second/config', [
      { cluster: { name: 'shared', server: 'https://second.example:6443' } },
      { cluster: { name: 'only-second', server: 'https://only-second.example:6443' } },
      { user: { name: 'shared', token: 'second-token' } },
      { context: { name: 'a', cluster: 'only-second', user: 'shared', namespace: 'from-second' } },
      { context: { name: 'b', cluster: 'only-second', user: 'shared', namespace: 'b-ns' } },
      { current: 'b' },
    ]);
  });

  it.each<[string, () => string, string | undefined]>([
    [
      'the first file to name a cluster, user or context wins',
      () => [first, second].join(delimiter),
      undefined,
    ],
    ['the first current-context set wins', () => [second, first].join(delimiter), undefined],
    ['a missing file is skipped', () => [join(dir, 'missing'), second, first].join(delimiter), undefined],
    ['--context picks a context of a later file', () => [first, second].join(delimiter), 'b'],
    ['--context picks a context named in both', () => [second, first].join(delimiter), 'a'],
  ])('%s', async (_name, env, context) => {
    const expected = await kubectlView(env(), context);
    expect(ours(env(), context)).toEqual(expected);
  });

  it('reads only --kubeconfig when it is given', () => {
    const loaded = loadKubeConfig({ KUBECONFIG: first, HOME: dir }, second);
    expect(loaded.paths).toEqual([second]);
    expect(currentClusterOf(loaded.kubeConfig)?.server).toBe('https://only-second.example:6443');
  });

  it('resolves a relative certificate path against the file that names it', async () => {
    const path = await kubeconfigFile('relative/config', [
      { cluster: { name: 'c', server: 'https://c.example', ca: 'ca.crt' } },
      { user: { name: 'u', token: 't' } },
      { context: { name: 'x', cluster: 'c', user: 'u' } },
      { current: 'x' },
    ]);
    const { kubeConfig } = loadKubeConfig({ KUBECONFIG: [first, path].join(delimiter) }, undefined, 'x');
    expect(currentClusterOf(kubeConfig)?.caFile).toBe(join(dir, 'relative', 'ca.crt'));
  });

  it.each<[string, () => Parameters<typeof loadKubeConfig>, RegExp]>([
    [
      'an unknown --context',
      () => [{ KUBECONFIG: first }, undefined, 'nope'],
      /context "nope" does not exist/,
    ],
    [
      'a KUBECONFIG of missing files only',
      () => [{ KUBECONFIG: join(dir, 'x') }, undefined, undefined],
      /no kubeconfig found: KUBECONFIG lists .*x and none of these files exists/,
    ],
    ['a missing --kubeconfig', () => [{}, join(dir, 'absent'), undefined], /cannot load kubeconfig .*absent/],
  ])('refuses %s with a KubeConfigError', (_name, args, message) => {
    expect(() => loadKubeConfig(...args())).toThrow(KubeConfigError);
    expect(() => loadKubeConfig(...args())).toThrow(message);
  });
});

/** Every field kubectl reads of the current cluster and user, paths resolved against `file`. */
async function kubectlFields(file: string) {
  const { stdout } = await execFileAsync('kubectl', ['config', 'view', '--minify', '--raw', '-o', 'json'], {
    env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: file },
  });
  const view = JSON.parse(stdout) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
    users: { name: string; user: Record<string, unknown> }[];
  };
  const at = (path: unknown) => (typeof path === 'string' ? resolve(dirname(file), path) : undefined);
  const cluster = view.clusters[0]?.cluster ?? {};
  const user = view.users[0]?.user ?? {};
  const exec = user['exec'] as Record<string, unknown> | undefined;
  const command = exec?.['command'] as string | undefined;
  return {
    cluster: {
      name: view.clusters[0]?.name,
      server: cluster['server'],
      caFile: at(cluster['certificate-authority']),
      caData: cluster['certificate-authority-data'],
      skipTLSVerify: cluster['insecure-skip-tls-verify'],
      tlsServerName: cluster['tls-server-name'],
    },
    user: {
      name: view.users[0]?.name,
      token: user['token'],
      tokenFile: at(user['tokenFile']),
      certFile: at(user['client-certificate']),
      keyFile: at(user['client-key']),
      certData: user['client-certificate-data'],
      keyData: user['client-key-data'],
      username: user['username'],
      password: user['password'],
      exec:
        exec === undefined
          ? undefined
          : {
              // Go's nil list (env: null) is an absent field.
              ...Object.fromEntries(Object.entries(exec).filter(([, value]) => value !== null)),
              command: command?.includes('/') === true ? at(command) : command,
            },
    },
  };
}

/** Ours, in the same shape: the fields kubectl has no word for (source…) left out. */
function ourFields(file: string) {
  const { kubeConfig } = loadKubeConfig({}, file);
  const { source: _c, ...cluster } = currentClusterOf(kubeConfig) ?? { name: '', server: '' };
  const { source: _u, impersonationFields: _i, ...user } = currentUserOf(kubeConfig) ?? { name: '' };
  const defined = (value: object) => JSON.parse(JSON.stringify(value)) as unknown;
  return defined({ cluster, user });
}

describe('the fields of a cluster and user are read as kubectl reads them', () => {
  it.each<[string, string]>([
    [
      'paths relative to the file, TLS options, tokenFile, basic auth and an exec plugin',
      `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://c.example:6443
    certificate-authority: ca.crt
    insecure-skip-tls-verify: true
    tls-server-name: inner.example
users:
- name: u
  user:
    tokenFile: tok
    client-certificate: certs/client.crt
    client-key: /abs/client.key
    username: bob
    password: pw
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [a, b]
      env: [{name: X, value: "1"}]
      installHint: get it
      provideClusterInfo: true
      interactiveMode: Never
contexts:
- name: x
  context: {cluster: c, user: u, namespace: ns}
current-context: x
`,
    ],
    [
      'inline certificate data, a token and an exec command on PATH',
      `clusters:
- name: c
  cluster: {server: "https://10.0.0.1", certificate-authority-data: Y2E=}
users:
- name: u
  user:
    token: abc
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [eks, get-token]}
contexts:
- {name: x, context: {cluster: c, user: u}}
current-context: x
`,
    ],
  ])('%s', async (name, text) => {
    const file = join(dir, 'fields', name.replace(/\W+/g, '-'), 'config');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
    expect(ourFields(file)).toEqual(JSON.parse(JSON.stringify(await kubectlFields(file))));
  });

  it('reads an empty file as an empty config', async () => {
    const empty = join(dir, 'empty-config');
    await writeFile(empty, '\n# nothing\n');
    const other = await kubeconfigFile('after-empty/config', [
      { cluster: { name: 'c', server: 'https://c.example' } },
      { user: { name: 'u', token: 't' } },
      { context: { name: 'x', cluster: 'c', user: 'u' } },
      { current: 'x' },
    ]);
    expect(loadKubeConfig({ KUBECONFIG: [empty, other].join(delimiter) }).context).toBe('x');
  });

  it.each<[string, string, RegExp]>([
    ['bad YAML', 'clusters: [', /cannot load kubeconfig .*bad-YAML: .*unexpected end/],
    ['a list that is not one', 'users: {a: 1}', /cannot load kubeconfig .*: users is not a list/],
    ['an entry with no name', 'clusters:\n- cluster: {server: x}', /clusters\[0\]\.name is missing/],
    [
      'a token that is not a string',
      'users:\n- name: u\n  user: {token: 12}',
      /users\[0\]\.user\.token is not a string/,
    ],
    [
      'an exec with no command',
      'users:\n- name: u\n  user: {exec: {apiVersion: v}}',
      /users\[0\]\.user\.exec\.command is missing/,
    ],
    [
      'a context naming no cluster',
      'clusters: []\ncontexts:\n- {name: x, context: {cluster: gone, user: u}}\ncurrent-context: x',
      /kubeconfig .*: context "x" names no cluster it defines/,
    ],
    ['no current context', 'clusters: []', /sets no current context; pass --context/],
  ])('refuses %s with a KubeConfigError naming the file', async (name, text, message) => {
    const file = join(dir, name.replace(/\W+/g, '-'));
    await writeFile(file, text);
    expect(() => loadKubeConfig({}, file)).toThrow(KubeConfigError);
    expect(() => loadKubeConfig({}, file)).toThrow(message);
  });
});

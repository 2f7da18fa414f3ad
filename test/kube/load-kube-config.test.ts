import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
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

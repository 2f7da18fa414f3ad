import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ApplySetRequest, WritePolicy } from '../../src/apply/apply-set-contract.js';
import { configMapParent } from '../../src/apply/config-map-parent.js';
import { createApplySetEngine, type ApplySetEngineOptions } from '../../src/apply/create-apply-set-engine.js';
import type { Command } from '../../src/cli/cli-io.js';
import { createKubeClient, type KubeClient, type KubeMethod } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { createKubeObjectApi, type KubeObjectApi } from '../../src/kube/kube-object-api.js';
import type { JsonObject } from '../../src/manifests/json-value.js';
import type { ManifestFile } from '../../src/manifests/manifest-limits.js';
import { readManifestDirectory } from '../../src/source/read-manifest-directory.js';
import { adminKubeConfig, adminKubeconfigPath } from '../harness/test-cluster.js';
import { runCli, type CliRun } from '../cli/cli-test-kit.js';

const execFileAsync = promisify(execFile);
const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/apply');

// Set directories live until the test file ends; then they go, so a run leaves nothing in the temp dir.
const setDirectories: string[] = [];
afterAll(async () => {
  await Promise.all(setDirectories.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A directory holding `files` (relative path → text), removed when the test file ends. */
export async function writeSetDirectory(files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'applyset-set-'));
  setDirectories.push(dir);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

/** The mixed fixture with `__NS__` and `__ID__` replaced, as a directory of its own. */
export async function mixedSetDirectory(namespace: string, id: string): Promise<string> {
  const source = join(fixtures, 'mixed');
  const files: Record<string, string> = {};
  for (const name of await readdir(source)) {
    const text = await readFile(join(source, name), 'utf8');
    files[name] = text.replaceAll('__NS__', namespace).replaceAll('__ID__', id);
  }
  return writeSetDirectory(files);
}

export function configMapYaml(namespace: string, name: string, data: Record<string, string>): string {
  const lines = Object.entries(data).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`);
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n${lines.join('\n')}\n`;
}

/** The admin client, counting every request it sends by method. */
export function countingClient(): { client: KubeClient; writes: () => number; requests: () => number } {
  let writes = 0;
  let requests = 0;
  const client = createKubeClient({
    credentials: createKubeCredentials(adminKubeConfig()),
    onRequest: (method) => {
      requests += 1;
      if (method !== 'GET') writes += 1;
    },
  });
  return { client, writes: () => writes, requests: () => requests };
}

/** The admin client, recording the method and path of every request it sends. */
export function recordingClient(): { client: KubeClient; sent: { method: KubeMethod; path: string }[] } {
  const sent: { method: KubeMethod; path: string }[] = [];
  const client = createKubeClient({
    credentials: createKubeCredentials(adminKubeConfig()),
    onRequest: (method, path) => void sent.push({ method, path }),
  });
  return { client, sent };
}

export function engineFor(client: KubeClient, options: Partial<ApplySetEngineOptions> = {}) {
  return createApplySetEngine({ kubeClient: client, concurrency: 8, ...options });
}

export async function requestFor(
  dir: string,
  parent: { namespace: string; name: string },
  options: Partial<Omit<ApplySetRequest, 'input' | 'write'>> & { readonly write?: Partial<WritePolicy> } = {},
): Promise<ApplySetRequest> {
  const files: ManifestFile[] = await readManifestDirectory(dir);
  const { write, ...rest } = options;
  return {
    input: {
      files,
      parent: configMapParent(parent.namespace, parent.name),
      defaultNamespace: parent.namespace,
    },
    write: { dryRun: false, force: false, adopt: true, ...write },
    prune: { mode: 'delete', allowEmpty: false },
    ...rest,
  };
}

let adminObjectApi: KubeObjectApi | undefined;

/** GET of one object through the admin client; undefined when absent. */
export async function getObject(path: string): Promise<JsonObject | undefined> {
  // One admin client per test file, not a kubeconfig read and a new client per GET.
  adminObjectApi ??= createKubeObjectApi(
    createKubeClient({ credentials: createKubeCredentials(adminKubeConfig()) }),
  );
  const api = adminObjectApi;
  const match = /^\/(?:api|apis\/([^/]+))\/([^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)\/([^/]+)$/.exec(path);
  if (match === null) throw new Error(`not an object path: ${path}`);
  const [, group = '', version = '', namespace = '', resource = '', name = ''] = match;
  return api.get({ group, version, resource, namespace }, name);
}

export function annotations(object: JsonObject | undefined): Record<string, string> {
  return ((object?.['metadata'] as JsonObject | undefined)?.['annotations'] ?? {}) as Record<string, string>;
}

export function labels(object: JsonObject | undefined): Record<string, string> {
  return ((object?.['metadata'] as JsonObject | undefined)?.['labels'] ?? {}) as Record<string, string>;
}

export function uidOf(object: JsonObject | undefined): string | undefined {
  return (object?.['metadata'] as JsonObject | undefined)?.['uid'] as string | undefined;
}

/** Runs the real kubectl against the test cluster. */
export async function kubectl(args: readonly string[], env: Record<string, string> = {}) {
  return execFileAsync('kubectl', ['--kubeconfig', adminKubeconfigPath(), ...args], {
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * Write requests (POST, PUT, PATCH, DELETE) the API server itself counted for one API group, from its
 * `/metrics`. Counted server-side, so nothing our client does escapes it.
 */
export async function serverWritesForGroup(group: string): Promise<number> {
  const { stdout } = await kubectl(['get', '--raw', '/metrics']);
  let total = 0;
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1];
    const lineGroup = /[{,]group="([^"]*)"/.exec(line)?.[1];
    if (lineGroup !== group || !['POST', 'PUT', 'PATCH', 'DELETE'].includes(verb ?? '')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Runs a subcommand with captured output, the way main() would, against the test cluster. */
export const runCommand = (command: Command, argv: readonly string[]): Promise<CliRun> =>
  runCli(command, argv);

/** Polls until `check` is true or the deadline passes; no fixed sleeps in the tests themselves. */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Writes a Deployment's status as the deployment controller would once it rolled out (no workload
 * controller runs on the test control plane), at the generation the object is at now.
 */
export async function markDeploymentRolledOut(
  namespace: string,
  name: string,
  replicas: number,
): Promise<void> {
  const live = await getObject(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
  const generation = (live?.['metadata'] as { generation: number }).generation;
  const status = {
    observedGeneration: generation,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
  };
  await kubectl([
    '-n',
    namespace,
    'patch',
    'deployment',
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';

/** The admin kubeconfig of the control plane the global setup started (or the one the env names). */
export function adminKubeconfigPath(): string {
  const path = process.env.APPLYSET_TEST_KUBECONFIG;
  if (path === undefined || path === '') {
    throw new Error(
      'APPLYSET_TEST_KUBECONFIG is not set: integration tests must run under the jest global setup',
    );
  }
  return path;
}

export function adminKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(adminKubeconfigPath());
  return kc;
}

/** A namespace name unique to this test, so tests can share the control plane. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export async function createNamespace(kc: k8s.KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name } } });
}

// ServiceAccount kubeconfigs live until the test file ends (outside jest, e.g. the replay script, there
// is no afterAll: the process's own temp dir use is its caller's business).
const kubeconfigDirs: string[] = [];
if (typeof afterAll === 'function') {
  afterAll(async () => {
    await Promise.all(kubeconfigDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
}

/** A temporary directory for a kubeconfig, removed when the test file ends. */
export async function kubeconfigDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  kubeconfigDirs.push(dir);
  return dir;
}

/**
 * Returns a kubeconfig file that acts as the given ServiceAccount (created if missing), with a token
 * from the TokenRequest API, so a test can run with exactly the rights RBAC grants that account.
 */
export async function kubeconfigForServiceAccount(namespace: string, name: string): Promise<string> {
  const admin = adminKubeConfig();
  const core = admin.makeApiClient(k8s.CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  const token = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const value = token.status?.token;
  if (value === undefined) throw new Error(`no token issued for ${namespace}/${name}`);
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('admin kubeconfig has no current cluster');
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token: value }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  const path = join(await kubeconfigDir('applyset-sa-'), 'kubeconfig');
  await writeFile(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}

/** True when the control plane takes client certificates (one started before that does not). */
export function clientCertificatesAccepted(): boolean {
  return existsSync(join(dirname(adminKubeconfigPath()), 'client-ca.crt'));
}

/**
 * A client certificate and key (PEM) for the user `commonName` in `groups`, signed by the control
 * plane's client CA with the openssl CLI, as a cluster's CA signs a kubeconfig's certificate.
 * `cpDir`: the work directory of the control plane (default: the one the global setup started).
 */
export async function clientCertificateFor(
  commonName: string,
  groups: readonly string[] = [],
  cpDir = dirname(adminKubeconfigPath()),
): Promise<{ cert: string; key: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'applyset-client-cert-'));
  try {
    const run = promisify(execFile);
    const subject = `/CN=${commonName}${groups.map((group) => `/O=${group}`).join('')}`;
    const key = join(dir, 'client.key');
    const csr = join(dir, 'client.csr');
    const cert = join(dir, 'client.crt');
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      key,
      '-out',
      csr,
    ]);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      csr,
      '-days',
      '1',
      '-out',
      cert,
      '-set_serial',
      String(Date.now()),
      '-CA',
      join(cpDir, 'client-ca.crt'),
      '-CAkey',
      join(cpDir, 'serving.key'),
    ]);
    return { cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The in-cluster config of a pod, as client-go's rest.InClusterConfig builds it: the API server at
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, trusted through the service account's ca.crt,
 * authenticated with its projected token (a tokenFile, so the rotated token is picked up) and the
 * pod's namespace as the default namespace.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import type { KubeConfig } from './kubeconfig-model.js';

/** Where Kubernetes mounts the service account of a pod. */
export const SERVICE_ACCOUNT_ROOT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The name of the context (and cluster and user) an in-cluster config is made of. */
export const IN_CLUSTER = 'in-cluster';

type Env = Readonly<Record<string, string | undefined>>;

/** True when the process runs in a pod: the service env is set and the token is mounted. */
export function inClusterAvailable(env: Env, serviceAccountRoot = SERVICE_ACCOUNT_ROOT): boolean {
  return (
    (env['KUBERNETES_SERVICE_HOST'] ?? '') !== '' &&
    (env['KUBERNETES_SERVICE_PORT'] ?? '') !== '' &&
    existsSync(join(serviceAccountRoot, 'token'))
  );
}

/**
 * The config of the pod; call it when inClusterAvailable. The token is not read here but on each
 * request (see createKubeCredentials): kubelet rewrites it before it expires.
 */
export function inClusterKubeConfig(env: Env, serviceAccountRoot = SERVICE_ACCOUNT_ROOT): KubeConfig {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  const caFile = join(serviceAccountRoot, 'ca.crt');
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(serviceAccountRoot, 'namespace'), 'utf8').trim();
  } catch {
    namespace = undefined; // client-go: no namespace file, the default namespace
  }
  return {
    clusters: [
      {
        name: IN_CLUSTER,
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        ...(existsSync(caFile) ? { caFile } : {}),
        source: serviceAccountRoot,
      },
    ],
    users: [{ name: IN_CLUSTER, tokenFile: join(serviceAccountRoot, 'token'), source: serviceAccountRoot }],
    contexts: [
      {
        name: IN_CLUSTER,
        cluster: IN_CLUSTER,
        user: IN_CLUSTER,
        ...(namespace === undefined || namespace === '' ? {} : { namespace }),
      },
    ],
    currentContext: IN_CLUSTER,
  };
}

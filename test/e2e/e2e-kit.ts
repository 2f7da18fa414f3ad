// What the e2e suites share about the cluster: kubectl, the ApplySet CRD, ApplySet objects (create,
// read, patch, wait for Ready or a commit) and ConfigMap fixtures; the controller process and waiting
// live beside it (controller-process.ts, wait-for.ts) and are re-exported here.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { adminKubeConfig, adminKubeconfigPath } from '../harness/test-cluster.js';
import { repoRoot } from './controller-process.js';
import { waitFor } from './wait-for.js';

export { waitFor } from './wait-for.js';
export {
  httpGet,
  logCount,
  repoRoot,
  startController,
  stopAllControllers,
  type ControllerProcess,
} from './controller-process.js';

const execFileAsync = promisify(execFile);

export const GROUP = 'applyset.dev';
export const VERSION = 'v1alpha1';
export const PLURAL = 'applysets';

export async function kubectl(args: readonly string[], kubeconfig = adminKubeconfigPath()): Promise<string> {
  const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** `kubectl apply -f -` with `manifests` (YAML or JSON documents) on stdin. */
export function kubectlApply(manifests: string, kubeconfig = adminKubeconfigPath()): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, 'apply', '-f', '-'],
      (error, _stdout, stderr) =>
        error === null ? resolve() : reject(new Error(`kubectl apply: ${stderr}`, { cause: error })),
    );
    child.stdin?.end(manifests);
  });
}

let crdInstalled: Promise<void> | undefined;

/** Installs the ApplySet CRD from crds/ (once per worker) and waits until it is served. */
export function installCrd(): Promise<void> {
  crdInstalled ??= (async () => {
    await kubectl(['apply', '-f', path.join(repoRoot, 'crds')]);
    await kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', `crd/${PLURAL}.${GROUP}`]);
  })();
  return crdInstalled;
}

export interface ApplySetOptions {
  readonly url: string;
  readonly branch?: string;
  readonly path?: string;
  readonly interval?: string;
  readonly prune?: boolean;
  readonly suspend?: boolean;
  readonly secretName?: string;
  /** `spec.source.secretRef.namespace`, with `secretName`. */
  readonly secretNamespace?: string;
  readonly targetNamespace?: string;
  readonly serviceAccountName?: string;
  readonly deletionPolicy?: 'Delete' | 'Orphan';
  /** `spec.decryption.secretRef.name`, with provider sops. */
  readonly decryptionSecret?: string;
}

export function applySetBody(
  namespace: string,
  name: string,
  options: ApplySetOptions,
): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ApplySet',
    metadata: { name, namespace },
    spec: {
      source: {
        url: options.url,
        ref: { branch: options.branch ?? 'main' },
        ...(options.path === undefined ? {} : { path: options.path }),
        ...(options.secretName === undefined
          ? {}
          : {
              secretRef: {
                name: options.secretName,
                ...(options.secretNamespace === undefined ? {} : { namespace: options.secretNamespace }),
              },
            }),
      },
      ...(options.decryptionSecret === undefined
        ? {}
        : { decryption: { provider: 'sops', secretRef: { name: options.decryptionSecret } } }),
      interval: options.interval ?? '5s',
      retryInterval: '2s',
      timeout: '30s',
      prune: options.prune ?? true,
      ...(options.suspend === undefined ? {} : { suspend: options.suspend }),
      ...(options.targetNamespace === undefined ? {} : { targetNamespace: options.targetNamespace }),
      ...(options.serviceAccountName === undefined ? {} : { serviceAccountName: options.serviceAccountName }),
      ...(options.deletionPolicy === undefined ? {} : { deletionPolicy: options.deletionPolicy }),
    },
  };
}

export interface Cluster {
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly custom: k8s.CustomObjectsApi;
}

export function cluster(): Cluster {
  const kc = adminKubeConfig();
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
  };
}

export interface ApplySetView {
  readonly metadata: {
    readonly generation?: number;
    readonly finalizers?: string[];
    readonly annotations?: Record<string, string>;
  };
  readonly status?: {
    readonly conditions?: { type: string; status: string; reason: string; message: string }[];
    readonly observedGeneration?: number;
    readonly lastAppliedRevision?: string;
    readonly lastAttemptedRevision?: string;
    readonly summary?: Record<string, number>;
    readonly errors?: {
      items: { object: string; message: string }[];
      totalCount: number;
      truncated: boolean;
    };
    readonly lastHandledReconcileAt?: string;
  };
}

export async function createApplySet(
  c: Cluster,
  namespace: string,
  name: string,
  options: ApplySetOptions,
): Promise<void> {
  await c.custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    body: applySetBody(namespace, name, options),
  });
}

export async function getApplySet(
  c: Cluster,
  namespace: string,
  name: string,
): Promise<ApplySetView | undefined> {
  try {
    return (await c.custom.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      name,
    })) as ApplySetView;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** Merge-patches the ApplySet (spec or metadata). */
export async function patchApplySet(namespace: string, name: string, patch: object): Promise<void> {
  await kubectl([
    '-n',
    namespace,
    'patch',
    `${PLURAL}.${GROUP}`,
    name,
    '--type',
    'merge',
    '-p',
    JSON.stringify(patch),
  ]);
}

export function condition(view: ApplySetView | undefined, type: string) {
  return view?.status?.conditions?.find((c) => c.type === type);
}

/** Waits until Ready has `status` (and, when given, the revision was applied or attempted). */
export function waitForReady(
  c: Cluster,
  namespace: string,
  name: string,
  status: 'True' | 'False' | 'Unknown',
  match: (view: ApplySetView) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<ApplySetView> {
  return waitFor(
    `ApplySet ${namespace}/${name} Ready=${status}`,
    async () => {
      const view = await getApplySet(c, namespace, name);
      return view !== undefined && condition(view, 'Ready')?.status === status && match(view)
        ? view
        : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the commit `sha` of branch main is the ApplySet's last applied revision, and Ready. */
export function waitForAppliedCommit(
  c: Cluster,
  namespace: string,
  name: string,
  sha: string,
  timeoutMs?: number,
): Promise<ApplySetView> {
  return waitForReady(
    c,
    namespace,
    name,
    'True',
    (v) => v.status?.lastAppliedRevision === `main@sha1:${sha}`,
    timeoutMs,
  );
}

export async function configMapData(
  c: Cluster,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  try {
    return (await c.core.readNamespacedConfigMap({ namespace, name })).data ?? {};
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export function configMapYaml(name: string, data: Record<string, string>, namespace?: string): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: ${name}`];
  if (namespace !== undefined) lines.push(`  namespace: ${namespace}`);
  lines.push('data:', ...Object.entries(data).map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`));
  return `${lines.join('\n')}\n`;
}

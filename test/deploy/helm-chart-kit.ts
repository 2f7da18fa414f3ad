import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import yaml from 'js-yaml';

// Renders the chart with a real helm (built from the Go module proxy by scripts/build-helm.sh) for the
// chart tests, which check the objects it would install. A missing helm fails the suite: CI builds it
// first, and a skipped chart test would let a broken chart land.

const execFileAsync = promisify(execFile);
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const chart = path.join(root, 'deploy/applyset-controller');
export const release = 'asc';
export const releaseNamespace = 'applyset-system';
// helm renders in well under a second, but CI shares two cores with a control plane.
export const HELM_TIMEOUT_MS = 60_000;

/** The Git bounds and the shared fetch's age the chart passes by default, in the order its template writes them. */
export const DEFAULT_GIT_LIMIT_ARGS = [
  '--git-max-object-bytes',
  '16Mi',
  '--git-max-fetch-bytes',
  '48Mi',
  '--git-max-fetch-objects',
  '50000',
  '--shared-fetch-max-age',
  '0s',
  '--git-cache-max-bytes',
  '768Mi',
  '--git-cache-max-repository-bytes',
  '256Mi',
];

/** The notification delivery settings the chart passes by default (today's defaults), in order. */
export const DEFAULT_NOTIFICATION_ARGS = [
  '--notification-rate',
  '1',
  '--notification-timeout',
  '10s',
  '--notification-attempts',
  '4',
  '--notification-queue-length',
  '100',
];

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string }[];
}

export interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: { name: string; emptyDir?: Record<string, unknown> }[];
}

let helm = '';

/** Finds helm before the file's tests run; every chart test file calls it once. */
export function useHelm(): void {
  beforeAll(async () => {
    helm = await findHelm();
  }, HELM_TIMEOUT_MS);
}

/** helm as scripts/build-helm.sh built it, or the one APPLYSET_HELM names. */
export async function findHelm(): Promise<string> {
  const override = process.env['APPLYSET_HELM'];
  if (override !== undefined && override !== '') return override;
  try {
    const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-helm.sh'), '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`helm is needed for the chart tests and is not built (${detail})`, { cause: error });
  }
}

export async function runHelm(args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync(helm, [...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

export async function render(
  values: Record<string, string> = {},
  flags: readonly string[] = [],
): Promise<K8sObject[]> {
  const sets = Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  const stdout = await runHelm([
    'template',
    release,
    chart,
    '--namespace',
    releaseNamespace,
    ...sets,
    ...flags,
  ]);
  return yaml.loadAll(stdout).filter((doc): doc is K8sObject => typeof doc === 'object' && doc !== null);
}

export function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${listObjects(objects)}`);
  return found;
}

function listObjects(objects: readonly K8sObject[]): string {
  return objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
}

export function kinds(objects: readonly K8sObject[]): string[] {
  return objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
}

export function controllerContainer(objects: readonly K8sObject[]): { pod: PodSpec; container: Container } {
  const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
    spec: { template: { spec: PodSpec } };
  };
  const pod = deployment.spec.template.spec;
  const container = pod.containers.find((c) => c.name === 'controller');
  if (container === undefined) throw new Error('no controller container');
  return { pod, container };
}

export function rules(object: K8sObject): PolicyRule[] {
  return (object as unknown as { rules: PolicyRule[] }).rules;
}

/** Whether any rule grants verb on group/resource, with the wildcards RBAC understands. */
export function allows(
  granted: readonly PolicyRule[],
  group: string,
  resource: string,
  verb: string,
): boolean {
  return granted.some(
    (rule) =>
      (rule.apiGroups ?? []).some((g) => g === '*' || g === group) &&
      (rule.resources ?? []).some((r) => r === '*' || r === resource) &&
      rule.verbs.some((v) => v === '*' || v === verb),
  );
}

export const controllerNeeds: [string, string, string[]][] = [
  ['applyset.dev', 'applysets', ['get', 'list', 'watch', 'update', 'patch']],
  ['applyset.dev', 'applysets/status', ['get', 'update', 'patch']],
  ['applyset.dev', 'applysets/finalizers', ['update']],
  ['applyset.dev', 'notifications', ['get', 'list', 'watch']],
  ['applyset.dev', 'notifications/status', ['patch']],
  ['', 'events', ['create', 'patch']],
  ['events.k8s.io', 'events', ['create', 'patch']],
  ['', 'serviceaccounts', ['get', 'list', 'watch', 'impersonate']],
];

export interface NetworkPolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: { ports: { port: string; protocol: string }[]; from?: Record<string, unknown>[] }[];
}

export function networkPolicy(objects: readonly K8sObject[]): { spec: NetworkPolicySpec } {
  return find(objects, 'NetworkPolicy', `${release}-applyset-controller`) as unknown as {
    spec: NetworkPolicySpec;
  };
}

export function selectorLabels(objects: readonly K8sObject[]): Record<string, string> {
  const deployment = find(objects, 'Deployment', `${release}-applyset-controller`) as unknown as {
    spec: { selector: { matchLabels: Record<string, string> } };
  };
  return deployment.spec.selector.matchLabels;
}

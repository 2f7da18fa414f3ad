// What the fleet bench applies (issue #39): per ApplySet, Flux's benchmark app (a Deployment, its
// ServiceAccount, a Service and an Ingress, one of each, the shape of
// test/e2e/controller-request-budget.itest.ts), or with --configmaps the older 4 ConfigMaps; the
// ApplySets themselves, labelled for their shard; and the account each is applied as.
import { DEFAULT_DEPLOYER_ACCOUNT } from '../src/api/applyset-account.js';

/** `flux-app`: Flux's benchmark app; `configmaps`: 4 ConfigMaps (the bench before #39). */
export type FleetWorkload = 'flux-app' | 'configmaps';

/** The label key the shards select on (docs/operations.md). */
export const SHARD_LABEL = 'sharding.applyset.dev/key';

/** The four objects of ApplySet `i`, named apart so that a fleet shares one namespace. */
function fluxApp(i: number): Record<string, string> {
  const name = `web-${i}`;
  return {
    'deployment.yaml':
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  selector:\n` +
      `    matchLabels: { app: ${name} }\n  template:\n    metadata:\n      labels: { app: ${name} }\n` +
      `    spec:\n      containers:\n        - name: web\n` +
      `          image: registry.k8s.io/pause:3.10\n`,
    'service-account.yaml': `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n`,
    'service.yaml':
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  selector: { app: ${name} }\n` +
      `  ports:\n    - port: 80\n      targetPort: 8080\n`,
    'ingress.yaml':
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ${name}\nspec:\n  rules:\n` +
      `    - host: ${name}.example.com\n      http:\n        paths:\n          - path: /\n` +
      `            pathType: Prefix\n            backend:\n              service: { name: ${name}, port: { number: 80 } }\n`,
  };
}

function configMaps(i: number): Record<string, string> {
  return Object.fromEntries(
    ['a', 'b', 'c', 'd'].map((c) => [
      `${c}.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s${i}-${c}\ndata:\n  v: "1"\n`,
    ]),
  );
}

/** The repository's files: `set-<i>/` holds ApplySet i's four objects. */
export function fleetFiles(n: number, workload: FleetWorkload): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i += 1) {
    const objects = workload === 'flux-app' ? fluxApp(i) : configMaps(i);
    for (const [file, text] of Object.entries(objects)) files[`set-${i}/${file}`] = text;
  }
  return files;
}

export interface ApplySetsSpec {
  readonly namespace: string;
  readonly url: string;
  readonly n: number;
  readonly intervalSeconds: number;
  /** A ServiceAccount of its own per ApplySet (spec.serviceAccountName: tenant-<i>). */
  readonly tenants: boolean;
  /** Above 1: ApplySet i is labelled shard<i mod shards>. */
  readonly shards: number;
}

/** One YAML document per ApplySet of the fleet. */
export function applySetDocuments(spec: ApplySetsSpec): string[] {
  return Array.from({ length: spec.n }, (_, i) => {
    const labels = spec.shards > 1 ? `, labels: { ${SHARD_LABEL}: ${shardName(i % spec.shards)} }` : '';
    return (
      `apiVersion: applyset.dev/v1alpha1\nkind: ApplySet\n` +
      `metadata: { name: fleet-${i}, namespace: ${spec.namespace}${labels} }\n` +
      `spec:\n  source: { url: "${spec.url}", ref: { branch: main }, path: set-${i} }\n` +
      `  interval: ${spec.intervalSeconds}s\n  prune: true\n` +
      (spec.tenants ? `  serviceAccountName: tenant-${i}\n` : '')
    );
  });
}

export const shardName = (index: number) => `shard${index}`;

/**
 * The Role the ApplySets' accounts are bound to: the kinds of both workloads. Without --tenants, the
 * one account the controller applies every ApplySet as by default (applyset-deployer) is bound to it;
 * with it, a ServiceAccount per ApplySet, so the controller acts as n identities.
 */
export function accountsYaml(namespace: string, n: number, tenants: boolean): string {
  const role =
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: { name: tenant, namespace: ${namespace} }\n` +
    `rules:\n` +
    `  - { apiGroups: [""], resources: [configmaps, serviceaccounts, services], verbs: [${VERBS}] }\n` +
    `  - { apiGroups: [apps], resources: [deployments], verbs: [${VERBS}] }\n` +
    `  - { apiGroups: [networking.k8s.io], resources: [ingresses], verbs: [${VERBS}] }\n`;
  const names = tenants ? Array.from({ length: n }, (_, i) => `tenant-${i}`) : [DEFAULT_DEPLOYER_ACCOUNT];
  return [role, ...names.map((name) => accountYaml(namespace, name))].join('---\n');
}

const VERBS = 'get, list, watch, create, update, patch, delete';

function accountYaml(namespace: string, name: string): string {
  return (
    `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: ${name}, namespace: ${namespace} }\n---\n` +
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: { name: ${name}, namespace: ${namespace} }\n` +
    `roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant }\n` +
    `subjects: [{ kind: ServiceAccount, name: ${name}, namespace: ${namespace} }]\n`
  );
}

/**
 * Issue #13 point 3: objects whose client-side apply patch is never empty, although the server takes
 * it without a change (the resourceVersion stays). kubectl says `configured` for each of them on every
 * apply. Shared by the engine test and the controller's end-to-end test, so both prove the same list.
 */
export interface ServerNoOpObject {
  /** File name in the set directory or repository. */
  readonly file: string;
  readonly kind: string;
  /** How kubectl names it in its output: `poddisruptionbudget.policy/web-x`. */
  readonly kubectlRef: string;
  /** Its API path, for reading its resourceVersion. */
  readonly path: string;
  readonly yaml: string;
}

/** The webhook configuration is cluster-scoped: its name carries the (unique) namespace. */
export function webhookConfigurationName(namespace: string, suffix: string): string {
  return `${namespace}-${suffix}`;
}

/**
 * One object of each kind the issue lists, with `suffix` in the names so kubectl's copy and ours can
 * live side by side in one namespace.
 */
export function serverNoOpObjects(namespace: string, suffix: string): ServerNoOpObject[] {
  return [secret, deployment, pdb, emptyConfigMap, webhookConfiguration].map((make) =>
    make(namespace, suffix),
  );
}

/** The objects as a set directory's files (file name → YAML). */
export function filesOf(objects: readonly ServerNoOpObject[]): Record<string, string> {
  return Object.fromEntries(objects.map((object) => [object.file, object.yaml]));
}

// The server moves stringData into data and drops it; the patch (stringData) is never empty.
function secret(namespace: string, suffix: string): ServerNoOpObject {
  const name = `creds-${suffix}`;
  return {
    file: 'secret.yaml',
    kind: 'Secret',
    kubectlRef: `secret/${name}`,
    path: `/api/v1/namespaces/${namespace}/secrets/${name}`,
    yaml: lines(
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'stringData:',
      '  password: hunter2',
    ),
  };
}

// `minReadySeconds: 0` and `readOnly: false` are zero values the server does not keep.
function deployment(namespace: string, suffix: string): ServerNoOpObject {
  const name = `web-${suffix}`;
  return {
    file: 'deployment.yaml',
    kind: 'Deployment',
    kubectlRef: `deployment.apps/${name}`,
    path: `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
    yaml: lines(
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'spec:',
      '  minReadySeconds: 0',
      '  selector: { matchLabels: { app: web } }',
      '  template:',
      '    metadata: { labels: { app: web } }',
      '    spec:',
      '      containers:',
      '        - name: web',
      '          image: nginx:1.27',
      '          volumeMounts:',
      '            - { name: data, mountPath: /data, readOnly: false }',
      '      volumes:',
      '        - { name: data, emptyDir: {} }',
    ),
  };
}

// A PDB's selector has the patch strategy `replace`: kubectl sends the whole selector every time.
function pdb(namespace: string, suffix: string): ServerNoOpObject {
  const name = `web-${suffix}`;
  return {
    file: 'pdb.yaml',
    kind: 'PodDisruptionBudget',
    kubectlRef: `poddisruptionbudget.policy/${name}`,
    path: `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/${name}`,
    yaml: lines(
      'apiVersion: policy/v1',
      'kind: PodDisruptionBudget',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'spec:',
      '  minAvailable: 1',
      '  selector:',
      '    matchLabels: { app: web }',
      '    matchExpressions:',
      '      - { key: tier, operator: In, values: [front] }',
    ),
  };
}

// `data: null` is sent as a removal of a field the object does not have.
function emptyConfigMap(namespace: string, suffix: string): ServerNoOpObject {
  const name = `empty-${suffix}`;
  return {
    file: 'configmap-empty.yaml',
    kind: 'ConfigMap',
    kubectlRef: `configmap/${name}`,
    path: `/api/v1/namespaces/${namespace}/configmaps/${name}`,
    yaml: lines(
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      `  name: ${name}`,
      `  namespace: ${namespace}`,
      'data: null',
    ),
  };
}

// A rule without `scope` is defaulted to "*" by the server; `rules` is atomic, so kubectl sends the
// whole list again each time. Harmless on a shared control plane: failurePolicy Ignore, and the rule
// matches a group no one serves.
function webhookConfiguration(namespace: string, suffix: string): ServerNoOpObject {
  const name = webhookConfigurationName(namespace, suffix);
  return {
    file: 'webhook.yaml',
    kind: 'ValidatingWebhookConfiguration',
    kubectlRef: `validatingwebhookconfiguration.admissionregistration.k8s.io/${name}`,
    path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
    yaml: lines(
      'apiVersion: admissionregistration.k8s.io/v1',
      'kind: ValidatingWebhookConfiguration',
      'metadata:',
      `  name: ${name}`,
      'webhooks:',
      '  - name: check.noop.applyset.dev',
      '    clientConfig: { url: "https://127.0.0.1:1/validate" }',
      '    rules:',
      '      - apiGroups: [noop.applyset.dev]',
      '        apiVersions: [v1]',
      '        operations: [CREATE]',
      '        resources: [things]',
      '    failurePolicy: Ignore',
      '    sideEffects: None',
      '    admissionReviewVersions: [v1]',
    ),
  };
}

function lines(...text: string[]): string {
  return [...text, ''].join('\n');
}

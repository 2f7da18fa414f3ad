// YAML documents whose aliases expand exponentially ("billion laughs"), in the shapes an attacker
// would use, each a few hundred bytes; and a legitimate file that reuses anchors heavily.

/** Each level a list of `fanOut` aliases to the level below: fanOut^levels leaves. */
export function nestedListBomb(levels = 9, fanOut = 9): string {
  const lines = [`l0: &l0 [${Array<string>(fanOut).fill('"lol"').join(', ')}]`];
  for (let level = 1; level <= levels; level += 1) {
    lines.push(
      `l${level}: &l${level} [${Array<string>(fanOut)
        .fill(`*l${level - 1}`)
        .join(', ')}]`,
    );
  }
  return manifest(lines);
}

/** Each level a mapping of `fanOut` keys, each an alias to the level below. */
export function nestedMapBomb(levels = 9, fanOut = 9): string {
  const keys = (value: string) =>
    Array.from({ length: fanOut }, (_, index) => `k${index}: ${value}`).join(', ');
  const lines = [`m0: &m0 {${keys('lol')}}`];
  for (let level = 1; level <= levels; level += 1) {
    lines.push(`m${level}: &m${level} {${keys(`*m${level - 1}`)}}`);
  }
  return manifest(lines);
}

/**
 * Each level merges the level below (`<<`) and adds one key holding it: without the merge the size
 * would grow by one level each time; with it, it doubles.
 */
export function mergeKeyBomb(levels = 40): string {
  const lines = ['g0: &g0 {a: lol, b: lol}'];
  for (let level = 1; level <= levels; level += 1) {
    lines.push(`g${level}: &g${level} {<<: *g${level - 1}, x${level}: *g${level - 1}}`);
  }
  return manifest(lines);
}

/** The bomb as the data of a ConfigMap, so nothing but its aliases is wrong with it. */
function manifest(lines: readonly string[]): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: lol',
    'bomb:',
    ...lines.map((line) => `  ${line}`),
  ].join('\n');
}

/**
 * A List of `count` Deployments sharing anchored labels, probes, resources and env, the way
 * hand-written manifests of a monitoring stack reuse them: many small aliases, nothing exponential.
 */
export function anchorReuseList(count = 150): string {
  const items = Array.from({ length: count }, (_, index) =>
    [
      `- apiVersion: apps/v1`,
      `  kind: Deployment`,
      `  metadata:`,
      `    name: exporter-${index}`,
      `    labels: ${index === 0 ? '&labels' : '*labels'}`,
      ...(index === 0
        ? [`      app.kubernetes.io/part-of: kube-prometheus`, `      app.kubernetes.io/managed-by: applyset`]
        : []),
      `  spec:`,
      `    selector: {matchLabels: *labels}`,
      `    template:`,
      `      metadata: {labels: *labels}`,
      `      spec:`,
      `        containers:`,
      `        - name: exporter`,
      `          image: quay.io/prometheus/node-exporter:v1.8.2`,
      `          resources: ${index === 0 ? '&resources {limits: {cpu: 250m, memory: 180Mi}, requests: {cpu: 102m, memory: 180Mi}}' : '*resources'}`,
      `          livenessProbe: ${index === 0 ? '&probe {httpGet: {path: /healthz, port: 9100}, periodSeconds: 10}' : '*probe'}`,
      `          readinessProbe: *probe`,
      `          env: ${index === 0 ? '&env [{name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}, {name: GOMAXPROCS, value: "1"}]' : '*env'}`,
    ].join('\n'),
  );
  return ['apiVersion: v1', 'kind: List', 'items:', ...items].join('\n') + '\n';
}

/**
 * The file of issue #33, finding 1: a comment naming sops (enough for the sops detection to parse
 * it), then seven anchors, each a list of ten aliases to the one before: 10^7 leaves from about 700
 * bytes, with no manifest around it.
 */
export function sopsLookingBomb(): string {
  const lines = ['# sops', `lol0: &lol0 [${Array<string>(10).fill('"lol"').join(', ')}]`];
  for (let level = 1; level <= 6; level += 1) {
    lines.push(
      `lol${level}: &lol${level} [${Array<string>(10)
        .fill(`*lol${level - 1}`)
        .join(', ')}]`,
    );
  }
  return `${lines.join('\n')}\n`;
}

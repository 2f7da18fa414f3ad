// Apply benchmark: our `applyset apply --prune` against `kubectl apply --prune --applyset` on the same
// local control plane, for N generated objects (ConfigMaps, Secrets, Services, Deployments):
// first apply, no-op re-apply, and 10% changed + 10% removed. Run: npm run bench
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { configMapParent } from '../src/apply/config-map-parent.js';
import { createApplySetEngine } from '../src/apply/create-apply-set-engine.js';
import { createKubeClient } from '../src/kube/kube-client.js';
import { createKubeCredentials } from '../src/kube/kube-credentials.js';
import { createKubeObjectApi } from '../src/kube/kube-object-api.js';
import { readManifestDirectory } from '../src/source/read-manifest-directory.js';
import { startControlPlane } from '../test/harness/control-plane.js';

const execFileAsync = promisify(execFile);
// Sizes with kubectl beside us, and larger sizes for ours alone: kubectl's no-op re-apply of 1,000
// objects already takes minutes (one GET and one PATCH per object), so 10,000 and 20,000 would take
// hours. `npm run bench -- --sizes 100,1000,10000,20000` picks others; sizes above KUBECTL_MAX run
// applyset only.
const DEFAULT_SIZES = [100, 1000, 10_000, 20_000];
const KUBECTL_MAX = 1000;
const sizesFlag = process.argv.indexOf('--sizes');
const SIZES =
  sizesFlag >= 0
    ? (process.argv[sizesFlag + 1] ?? '')
        .split(',')
        .map(Number)
        .filter((n) => n > 0)
    : DEFAULT_SIZES;
// `--concurrency N`: what `applyset apply --concurrency N` runs the engine with (its default, 16).
const concurrencyFlag = process.argv.indexOf('--concurrency');
const CONCURRENCY = concurrencyFlag >= 0 ? Number(process.argv[concurrencyFlag + 1]) : 16;
const KINDS = ['ConfigMap', 'Secret', 'Service', 'Deployment'] as const;

interface Measurement {
  readonly wallMs: number;
  /** Requests the tool itself sent (our client's counter; kubectl's -v=6 request log). */
  readonly clientRequests: number;
  readonly clientWrites: number;
  /** The API server's own count (apiserver_request_total), leases and events left out. */
  readonly serverRequests: number;
}

function manifest(kind: (typeof KINDS)[number], namespace: string, index: number, revision: number): string {
  const name = `${kind.toLowerCase()}-${index}`;
  const meta = `metadata:\n  name: ${name}\n  namespace: ${namespace}\n  labels:\n    app: bench-${index % 10}\n`;
  switch (kind) {
    case 'ConfigMap':
      return `apiVersion: v1\nkind: ConfigMap\n${meta}data:\n  revision: "${revision}"\n  payload: "${'x'.repeat(64)}"\n`;
    case 'Secret':
      return `apiVersion: v1\nkind: Secret\n${meta}type: Opaque\ndata:\n  revision: ${Buffer.from(String(revision)).toString('base64')}\n`;
    case 'Service':
      return `apiVersion: v1\nkind: Service\n${meta}spec:\n  selector:\n    app: bench-${index % 10}\n  ports:\n    - name: http\n      port: 80\n      targetPort: ${8000 + revision}\n`;
    case 'Deployment':
      return (
        `apiVersion: apps/v1\nkind: Deployment\n${meta}spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: ${name}\n` +
        `  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n        - name: web\n` +
        `          image: nginx:1.${25 + revision}\n          env:\n            - name: REVISION\n              value: "${revision}"\n`
      );
  }
}

/** Writes N objects: the first `changed` get revision 2, the last `removed` are left out. */
async function writeSet(dir: string, namespace: string, n: number, changed: number, removed: number) {
  await rm(dir, { recursive: true, force: true });
  await execFileAsync('mkdir', ['-p', dir]);
  for (let index = 0; index < n - removed; index += 1) {
    const kind = KINDS[index % KINDS.length] ?? 'ConfigMap';
    await writeFile(
      join(dir, `${String(index).padStart(5, '0')}.yaml`),
      manifest(kind, namespace, index, index < changed ? 2 : 1),
    );
  }
}

async function serverRequestTotal(kubeconfig: string): Promise<number> {
  const { stdout } = await execFileAsync(
    'kubectl',
    ['--kubeconfig', kubeconfig, 'get', '--raw', '/metrics'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  let total = 0;
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    // The controller-manager's lease renewals and events run in the background: not ours.
    if (/resource="(leases|events)"/.test(line)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  // This very metrics GET is counted on the next read; take it off.
  return total;
}

async function measure(
  kubeconfig: string,
  run: () => Promise<{ requests: number; writes: number }>,
): Promise<Measurement> {
  const before = await serverRequestTotal(kubeconfig);
  const started = performance.now();
  const { requests, writes } = await run();
  const wallMs = performance.now() - started;
  const after = await serverRequestTotal(kubeconfig);
  return { wallMs, clientRequests: requests, clientWrites: writes, serverRequests: after - before - 1 };
}

async function runOurs(kubeConfig: KubeConfig, dir: string, namespace: string) {
  let requests = 0;
  let writes = 0;
  const kubeClient = createKubeClient({
    credentials: createKubeCredentials(kubeConfig),
    maxSockets: Math.max(32, CONCURRENCY),
    onRequest: (method) => {
      requests += 1;
      if (method !== 'GET') writes += 1;
    },
  });
  // A fresh engine per run: no discovery cache carried over, as for a new `applyset apply` process.
  const engine = createApplySetEngine({ kubeClient, concurrency: CONCURRENCY });
  const result = await engine({
    input: {
      files: await readManifestDirectory(dir),
      parent: configMapParent(namespace, 'bench-set'),
      defaultNamespace: namespace,
    },
    write: { dryRun: false, force: false, adopt: true },
    prune: { mode: 'delete', allowEmpty: false },
  });
  const failed = result.outcomes.filter((o) => o.action === 'failed' || o.action === 'conflict');
  if (failed.length > 0)
    throw new Error(`applyset: ${failed.length} objects failed: ${JSON.stringify(failed[0])}`);
  return { requests, writes };
}

async function runKubectl(kubeconfig: string, dir: string, namespace: string) {
  const { stderr } = await execFileAsync(
    'kubectl',
    [
      '--kubeconfig',
      kubeconfig,
      'apply',
      '-R',
      '-f',
      dir,
      '-n',
      namespace,
      '--prune',
      '--applyset=configmap/bench-set',
      '-v=6',
    ],
    { env: { ...process.env, KUBECTL_APPLYSET: 'true' }, maxBuffer: 256 * 1024 * 1024 },
  );
  // kubectl 1.32 logs one structured line per response at -v=6: "Response" verb="GET" url="…".
  const verbs = stderr
    .split('\n')
    .map(
      (line) =>
        /"Response" verb="([A-Z]+)"/.exec(line)?.[1] ??
        /\] (GET|POST|PUT|PATCH|DELETE) https?:\/\//.exec(line)?.[1],
    )
    .filter((verb): verb is string => verb !== undefined);
  return { requests: verbs.length, writes: verbs.filter((verb) => verb !== 'GET').length };
}

function row(n: number, scenario: string, tool: string, m: Measurement): string {
  return [
    String(n).padStart(5),
    scenario.padEnd(24),
    tool.padEnd(9),
    `${(m.wallMs / 1000).toFixed(2)} s`.padStart(9),
    String(m.clientRequests).padStart(9),
    String(m.clientWrites).padStart(7),
    String(m.serverRequests).padStart(11),
  ].join('  ');
}

async function main() {
  process.stderr.write('starting a local control plane...\n');
  const controlPlane = await startControlPlane({ ownerPid: process.pid });
  const work = await mkdtemp(join(tmpdir(), 'applyset-bench-'));
  try {
    const kubeconfig = controlPlane.kubeconfigPath;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfig);
    const api = createKubeObjectApi(createKubeClient({ credentials: createKubeCredentials(kubeConfig) }));
    const lines = [
      `${'N'.padStart(5)}  ${'scenario'.padEnd(24)}  ${'tool'.padEnd(9)}  ${'wall'.padStart(9)}  ${'requests'.padStart(9)}  ${'writes'.padStart(7)}  ${'apiserver Δ'.padStart(11)}`,
    ];
    for (const n of SIZES) {
      const tenth = Math.round(n / 10);
      for (const tool of n <= KUBECTL_MAX ? (['applyset', 'kubectl'] as const) : (['applyset'] as const)) {
        const namespace = `bench-${tool}-${n}`;
        await api.create(
          { group: '', version: 'v1', resource: 'namespaces', namespace: '' },
          { metadata: { name: namespace } },
        );
        const dir = join(work, namespace);
        const run = () =>
          tool === 'applyset' ? runOurs(kubeConfig, dir, namespace) : runKubectl(kubeconfig, dir, namespace);
        await writeSet(dir, namespace, n, 0, 0);
        lines.push(row(n, 'first apply', tool, await measure(kubeconfig, run)));
        lines.push(row(n, 'no-op re-apply', tool, await measure(kubeconfig, run)));
        await writeSet(dir, namespace, n, tenth, tenth);
        lines.push(row(n, 'change 10%, remove 10%', tool, await measure(kubeconfig, run)));
        process.stderr.write(`${tool} N=${n} done\n`);
      }
    }
    process.stdout.write(
      `${lines.join('\n')}\n\nrequests/writes: what the tool sent (our client's counter; kubectl's -v=6 log).\n` +
        `apiserver Δ: apiserver_request_total before and after, leases and events left out.\n` +
        `applyset runs in-process (no Node startup), with --concurrency ${CONCURRENCY}; kubectl includes its process startup.\n` +
        `kubectl is measured up to N = ${KUBECTL_MAX} only: beyond, its per-object requests take hours.\n`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
    await controlPlane.stop();
  }
}

// `--controller 100,1000 [--both] [--shards 4] ...`: the controller fleet benchmark instead
// (bench/controller-bench.ts);
// `--startup [runs]`: the command's start-up beside kubectl's (bench/startup-bench.ts).
const controllerFlag = process.argv.indexOf('--controller');
const startupFlag = process.argv.indexOf('--startup');
if (startupFlag >= 0) {
  const { runStartupBench } = await import('./startup-bench.js');
  runStartupBench(Number(process.argv[startupFlag + 1] ?? '') || 9);
} else if (controllerFlag >= 0) {
  const { runControllerBench } = await import('./controller-bench.js');
  const flagValue = (flag: string): string | undefined => {
    const index = process.argv.indexOf(flag);
    return index < 0 ? undefined : process.argv[index + 1];
  };
  const interval = flagValue('--interval');
  // The flags are described in bench/controller-bench.ts.
  await runControllerBench({
    sizes: (process.argv[controllerFlag + 1] ?? '100')
      .split(',')
      .map(Number)
      .filter((n) => n > 0),
    applyAsController: process.argv.includes('--both')
      ? [false, true]
      : [process.argv.includes('--apply-as-controller')],
    shards: Number(flagValue('--shards') ?? 1),
    workload: process.argv.includes('--configmaps') ? 'configmaps' : 'flux-app',
    tenants: process.argv.includes('--tenants'),
    intervalSeconds: interval === undefined ? undefined : Number(interval),
    restWindowSeconds: Number(flagValue('--rest-window') ?? 90),
    relist: !process.argv.includes('--no-relist'),
  });
} else {
  await main();
}

import { spawn } from 'node:child_process';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { PatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { computeApplyPatch } from '../../src/merge/compute-apply-patch.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import {
  buildCreateBody,
  buildLastAppliedConfiguration,
  LAST_APPLIED_ANNOTATION,
} from '../../src/merge/last-applied-configuration.js';
import type { DiffKind, DiffSequence, DiffStep } from './generate-sequence.js';

/** What `kubectl apply` printed for the object, or the error both sides must agree on. */
export type Verdict = 'created' | 'configured' | 'unchanged' | 'error';

export interface DiffContext {
  readonly client: KubeClient;
  readonly metaSource: PatchMetaSource;
  /** The kubectl binary to run. */
  readonly kubectl: string;
  readonly kubeconfigPath: string;
  /** kubectl's discovery and OpenAPI cache, shared by every invocation so each does not refetch. */
  readonly kubectlCacheDir: string;
  /** kubectl applies here... */
  readonly namespaceKubectl: string;
  /** ...and our engine here. */
  readonly namespaceEngine: string;
  /** The group of the installed Widget CRD. */
  readonly crdGroup: string;
  /** Replay: run kubectl at -v=8 to capture its PATCH body, and report each step. */
  readonly onStep?: (report: StepReport) => void;
}

export interface StepReport {
  readonly index: number;
  readonly step: DiffStep;
  readonly kubectl: { verdict: Verdict; output: string; patch?: string };
  readonly engine: { verdict: Verdict; output: string; patch?: string };
  readonly liveKubectl: JsonObject | undefined;
  readonly liveEngine: JsonObject | undefined;
}

export class SequenceMismatch extends Error {
  override readonly name = 'SequenceMismatch';
  constructor(
    readonly seed: number,
    readonly stepIndex: number,
    detail: string,
  ) {
    super(
      `seed ${seed}, step ${stepIndex}: ${detail}\n` +
        `replay: DIFF_SEED=${seed} DIFF_SEQUENCES=1 npm test -- --selectProjects integration --testPathPattern merge-differential, ` +
        `or APPLYSET_TEST_KUBECONFIG=... node --import tsx scripts/replay-differential.ts ${seed}`,
    );
  }
}

const RESOURCES: Record<DiffKind, { readonly group: string; readonly resource: string }> = {
  Deployment: { group: 'apps', resource: 'deployments' },
  StatefulSet: { group: 'apps', resource: 'statefulsets' },
  Service: { group: '', resource: 'services' },
  ConfigMap: { group: '', resource: 'configmaps' },
  Secret: { group: '', resource: 'secrets' },
  PodDisruptionBudget: { group: 'policy', resource: 'poddisruptionbudgets' },
  Widget: { group: '', resource: 'widgets' },
};

function collectionPath(sequence: DiffSequence, namespace: string, crdGroup: string): string {
  const { group, resource } = RESOURCES[sequence.kind];
  const g = sequence.kind === 'Widget' ? crdGroup : group;
  const root = g === '' ? '/api/v1' : `/apis/${g}/v1`;
  return `${root}/namespaces/${namespace}/${resource}`;
}

/**
 * Runs one sequence: each manifest version goes through `kubectl apply` into one namespace and
 * through our engine (GET, computeApplyPatch, PATCH or create) into the other; after every step the
 * verdicts and the live objects must agree. Throws SequenceMismatch at the first disagreement.
 */
export async function runSequence(context: DiffContext, sequence: DiffSequence): Promise<void> {
  const pathKubectl = collectionPath(sequence, context.namespaceKubectl, context.crdGroup);
  const pathEngine = collectionPath(sequence, context.namespaceEngine, context.crdGroup);
  for (const [index, step] of sequence.steps.entries()) {
    let kubectl: StepReport['kubectl'];
    let engine: StepReport['engine'];
    if (step.type === 'apply') {
      [kubectl, engine] = await Promise.all([
        kubectlApply(context, step.manifest),
        engineApply(context, sequence, pathEngine, step.manifest),
      ]);
    } else {
      [kubectl, engine] = await Promise.all([
        write(context.client, `${pathKubectl}/${sequence.name}`, step),
        write(context.client, `${pathEngine}/${sequence.name}`, step),
      ]);
    }
    const [liveKubectl, liveEngine] = await Promise.all([
      getLive(context.client, `${pathKubectl}/${sequence.name}`),
      getLive(context.client, `${pathEngine}/${sequence.name}`),
    ]);
    context.onStep?.({ index, step, kubectl, engine, liveKubectl, liveEngine });
    if (kubectl.verdict !== engine.verdict) {
      throw new SequenceMismatch(
        sequence.seed,
        index,
        `kubectl said ${kubectl.verdict} (${kubectl.output.trim()}), our engine ${engine.verdict} (${engine.output.trim()})`,
      );
    }
    const a = comparable(liveKubectl, context.namespaceKubectl, context.namespaceEngine);
    const b = comparable(liveEngine, context.namespaceKubectl, context.namespaceEngine);
    const differences = differingPaths(a, b);
    if (differences.length > 0) {
      throw new SequenceMismatch(
        sequence.seed,
        index,
        `live objects differ after ${step.type === 'apply' ? 'apply' : step.description} at ` +
          differences
            .slice(0, 5)
            .map((d) => `${d.path}: kubectl ${JSON.stringify(d.a)} vs engine ${JSON.stringify(d.b)}`)
            .join('; '),
      );
    }
  }
}

async function kubectlApply(context: DiffContext, manifest: JsonObject): Promise<StepReport['kubectl']> {
  const verbose = context.onStep !== undefined;
  const args = [
    '--kubeconfig',
    context.kubeconfigPath,
    '--cache-dir',
    context.kubectlCacheDir,
    'apply',
    '-n',
    context.namespaceKubectl,
    '-f',
    '-',
    ...(verbose ? ['-v=9'] : []),
  ];
  const { code, stdout, stderr } = await run(context.kubectl, args, JSON.stringify(manifest));
  const patch = verbose ? patchFromLog(stderr) : undefined;
  if (code !== 0)
    return {
      verdict: 'error',
      output: stderr
        .split('\n')
        .filter((l) => !/^I\d{4}/.test(l))
        .join('\n'),
    };
  const verdict = / (created|configured|unchanged)$/m.exec(stdout)?.[1] as Verdict | undefined;
  if (verdict === undefined) throw new Error(`unexpected kubectl output: ${stdout}`);
  return { verdict, output: stdout, ...(patch === undefined ? {} : { patch }) };
}

/** kubectl -v=9 logs each request body as a Go-quoted string just before the request's curl line. */
function patchFromLog(log: string): string | undefined {
  const lines = log.split('\n');
  const at = lines.findIndex((line) => line.includes('curl -v -XPATCH'));
  for (let i = at - 1; i >= 0; i--) {
    const quoted = /"Request Body" body=(".*")$/.exec(lines[i] ?? '')?.[1];
    if (quoted !== undefined && quoted !== '""') return JSON.parse(quoted) as string;
  }
  return undefined;
}

/** The engine side, as the controller will do it: GET; create when absent; else compute and PATCH. */
async function engineApply(
  context: DiffContext,
  sequence: DiffSequence,
  collection: string,
  manifest: JsonObject,
): Promise<StepReport['engine']> {
  const withNamespace: JsonObject = {
    ...manifest,
    metadata: { ...(manifest.metadata as JsonObject), namespace: context.namespaceEngine },
  };
  const [group, version] = String(manifest.apiVersion).includes('/')
    ? String(manifest.apiVersion).split('/')
    : ['', String(manifest.apiVersion)];
  const gvk = { group: group ?? '', version: version ?? 'v1', kind: sequence.kind };
  const query = { fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' };
  try {
    const current = await getLive(context.client, `${collection}/${sequence.name}`);
    if (current === undefined) {
      const body = buildCreateBody(buildLastAppliedConfiguration(withNamespace).modified);
      await context.client.request({ method: 'POST', path: collection, query, body: JSON.stringify(body) });
      return { verdict: 'created', output: 'created', patch: encodeGoJson(body) };
    }
    const meta = await context.metaSource.metaFor(gvk);
    const result = computeApplyPatch({ manifest: withNamespace, current, meta });
    if (result.kind === 'unchanged') return { verdict: 'unchanged', output: 'unchanged', patch: '{}' };
    await context.client.request({
      method: 'PATCH',
      path: `${collection}/${sequence.name}`,
      query,
      body: result.body,
      contentType: result.patchType,
    });
    return { verdict: 'configured', output: `configured (${result.patchType})`, patch: result.body };
  } catch (error) {
    return { verdict: 'error', output: error instanceof Error ? error.message : String(error) };
  }
}

async function write(
  client: KubeClient,
  path: string,
  step: DiffStep & { type: 'write' },
): Promise<StepReport['kubectl']> {
  try {
    await client.request({
      method: 'PATCH',
      path,
      body: JSON.stringify(step.patch),
      contentType: step.contentType,
    });
    return { verdict: 'configured', output: step.description };
  } catch (error) {
    return { verdict: 'error', output: error instanceof Error ? error.message : String(error) };
  }
}

async function getLive(client: KubeClient, path: string): Promise<JsonObject | undefined> {
  try {
    const live = await client.request({ method: 'GET', path });
    return isJsonObject(live) ? live : undefined;
  } catch (error) {
    if (error instanceof KubeApiError && error.notFound) return undefined;
    throw error;
  }
}

/**
 * The live object without what legitimately differs between two objects of the same name in two
 * namespaces, or between two writes of the same content:
 * - metadata.uid, resourceVersion, creationTimestamp, generation: identity and bookkeeping, not content
 *   (generation counts spec writes; kubectl and the engine may reach the same spec in different
 *   numbers of writes only if a verdict differs, which is checked separately);
 * - metadata.managedFields: holds timestamps; both sides use the manager `kubectl-client-side-apply`;
 * - metadata.namespace, and the namespace inside the last-applied annotation (compared byte for byte
 *   after substituting the namespace, so the annotation is otherwise held to be identical);
 * - Service spec.clusterIP/clusterIPs: allocated by the server, different for each Service.
 */
export function comparable(
  live: JsonObject | undefined,
  namespaceKubectl: string,
  namespaceEngine: string,
): JsonObject | undefined {
  if (live === undefined) return undefined;
  const copy = structuredClone(live);
  const metadata = isJsonObject(copy.metadata) ? copy.metadata : {};
  for (const key of [
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'generation',
    'managedFields',
    'namespace',
  ]) {
    delete metadata[key];
  }
  const annotations = isJsonObject(metadata.annotations) ? metadata.annotations : undefined;
  const lastApplied = annotations?.[LAST_APPLIED_ANNOTATION];
  if (annotations !== undefined && typeof lastApplied === 'string') {
    annotations[LAST_APPLIED_ANNOTATION] = lastApplied
      .split(`"namespace":"${namespaceKubectl}"`)
      .join('"namespace":"<ns>"')
      .split(`"namespace":"${namespaceEngine}"`)
      .join('"namespace":"<ns>"');
  }
  if (copy.kind === 'Service' && isJsonObject(copy.spec)) {
    delete copy.spec.clusterIP;
    delete copy.spec.clusterIPs;
  }
  return copy;
}

export function differingPaths(
  a: unknown,
  b: unknown,
  path = '',
): { path: string; a: unknown; b: unknown }[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [{ path: path || '/', a, b }];
    return a.flatMap((item, i) => differingPaths(item, b[i], `${path}/${i}`));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => differingPaths(a[k], b[k], `${path}/${k}`));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path: path || '/', a, b }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function run(
  command: string,
  args: readonly string[],
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

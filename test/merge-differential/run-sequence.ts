import { spawn } from 'node:child_process';
import { KubeApiError } from '../../src/kube/kube-api-error.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { PatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import { decodeDocuments } from '../../src/manifests/decode-documents.js';
import { isJsonObject, type JsonObject } from '../../src/manifests/json-value.js';
import { computeApplyPatch } from '../../src/merge/compute-apply-patch.js';
import { encodeGoJson } from '../../src/merge/encode-go-json.js';
import {
  buildCreateBody,
  buildLastAppliedConfiguration,
} from '../../src/merge/last-applied-configuration.js';
import { comparable, differingPaths } from './compare-live.js';
import { resourceOfKind, type DiffSequence, type DiffStep } from './generate-sequence.js';
import { renderYaml } from './yaml11-scalars.js';
import { stringifyJson } from '../../src/manifests/lossless-json.js';

/** What `kubectl apply` printed for the object, or the error both sides must agree on. */
type Verdict = 'created' | 'configured' | 'unchanged' | 'error';

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

/** The collection the sequence's object lives in, on one side. */
function collectionPath(sequence: DiffSequence, apiVersion: string, namespace: string): string {
  const { plural, clusterScoped } = resourceOfKind(sequence.kind);
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return clusterScoped === true ? `${root}/${plural}` : `${root}/namespaces/${namespace}/${plural}`;
}

/**
 * The object's name on one side: a cluster-scoped object cannot be told apart by its namespace, so
 * it carries the side's namespace in its name (and `comparable` takes it out again).
 */
function sideName(sequence: DiffSequence, namespace: string): string {
  return resourceOfKind(sequence.kind).clusterScoped === true
    ? `${sequence.name}-${namespace}`
    : sequence.name;
}

/** One side's object: its path, and a manifest of it as that side applies it. */
interface Side {
  readonly namespace: string;
  readonly path: string;
  manifest(step: DiffStep & { type: 'apply' }): { text: string; manifest: JsonObject };
}

function side(sequence: DiffSequence, namespace: string): Side {
  const first = sequence.steps.find((step) => step.type === 'apply');
  const apiVersion = String(first?.type === 'apply' ? first.manifest.apiVersion : 'v1');
  const name = sideName(sequence, namespace);
  return {
    namespace,
    path: `${collectionPath(sequence, apiVersion, namespace)}/${name}`,
    manifest(step) {
      const manifest = { ...step.manifest, metadata: { ...(step.manifest.metadata as JsonObject), name } };
      const text = step.yaml11 === undefined ? stringifyJson(manifest) : renderYaml(manifest, step.yaml11);
      return { text, manifest };
    },
  };
}

/**
 * Runs one sequence: each manifest version goes through `kubectl apply` into one namespace and
 * through our engine (GET, computeApplyPatch, PATCH or create) into the other; after every step the
 * verdicts and the live objects must agree. Throws SequenceMismatch at the first disagreement.
 */
export async function runSequence(context: DiffContext, sequence: DiffSequence): Promise<void> {
  const kubectlSide = side(sequence, context.namespaceKubectl);
  const engineSide = side(sequence, context.namespaceEngine);
  for (const [index, step] of sequence.steps.entries()) {
    let kubectl: StepReport['kubectl'];
    let engine: StepReport['engine'];
    if (step.type === 'apply') {
      [kubectl, engine] = await Promise.all([
        kubectlApply(context, kubectlSide.manifest(step).text),
        engineApply(context, sequence, engineSide, step),
      ]);
    } else {
      [kubectl, engine] = await Promise.all([
        write(context.client, kubectlSide.path, step),
        write(context.client, engineSide.path, step),
      ]);
    }
    const [liveKubectl, liveEngine] = await Promise.all([
      getLive(context.client, kubectlSide.path),
      getLive(context.client, engineSide.path),
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
            .map((d) => `${d.path}: kubectl ${stringifyJson(d.a)} vs engine ${stringifyJson(d.b)}`)
            .join('; '),
      );
    }
  }
}

async function kubectlApply(context: DiffContext, text: string): Promise<StepReport['kubectl']> {
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
  const { code, stdout, stderr } = await run(context.kubectl, args, text);
  const patch = verbose ? patchFromLog(stderr) : undefined;
  if (code !== 0) return { verdict: 'error', output: kubectlError(stderr) };
  const verdict = / (created|configured|unchanged)$/m.exec(stdout)?.[1] as Verdict | undefined;
  if (verdict === undefined) throw new Error(`unexpected kubectl output: ${stdout}`);
  return { verdict, output: stdout, ...(patch === undefined ? {} : { patch }) };
}

/** kubectl's own error lines, without the -v=9 request log (whose curl lines span several lines). */
function kubectlError(stderr: string): string {
  const lines = stderr.split('\n');
  const errors = lines.filter((l) => /^(error|Error|The |Warning)/.test(l));
  return (errors.length > 0 ? errors : lines.filter((l) => !/^I\d{4}/.test(l))).join('\n');
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

/**
 * The engine side, as the controller will do it: decode the text kubectl got (when it is YAML), GET;
 * create when absent; else compute and PATCH.
 */
async function engineApply(
  context: DiffContext,
  sequence: DiffSequence,
  engineSide: Side,
  step: DiffStep & { type: 'apply' },
): Promise<StepReport['engine']> {
  const query = { fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' };
  try {
    const decoded = decodedManifest(engineSide.manifest(step));
    const clusterScoped = resourceOfKind(sequence.kind).clusterScoped === true;
    const manifest: JsonObject = clusterScoped
      ? decoded
      : { ...decoded, metadata: { ...(decoded.metadata as JsonObject), namespace: engineSide.namespace } };
    const [group, version] = String(manifest.apiVersion).includes('/')
      ? String(manifest.apiVersion).split('/')
      : ['', String(manifest.apiVersion)];
    const gvk = { group: group ?? '', version: version ?? 'v1', kind: sequence.kind };
    const collection = engineSide.path.slice(0, engineSide.path.lastIndexOf('/'));
    const current = await getLive(context.client, engineSide.path);
    if (current === undefined) {
      const body = buildCreateBody(buildLastAppliedConfiguration(manifest).modified);
      await context.client.request({ method: 'POST', path: collection, query, body: stringifyJson(body) });
      return { verdict: 'created', output: 'created', patch: encodeGoJson(body) };
    }
    const meta = await context.metaSource.metaFor(gvk);
    const result = computeApplyPatch({ manifest, current, meta });
    if (result.kind === 'unchanged') return { verdict: 'unchanged', output: 'unchanged', patch: '{}' };
    await context.client.request({
      method: 'PATCH',
      path: engineSide.path,
      query,
      body: result.body,
      contentType: result.patchType,
    });
    return { verdict: 'configured', output: `configured (${result.patchType})`, patch: result.body };
  } catch (error) {
    return { verdict: 'error', output: error instanceof Error ? error.message : String(error) };
  }
}

/** A YAML text is decoded as the engine decodes files; a JSON one is the manifest itself. */
function decodedManifest({ text, manifest }: { text: string; manifest: JsonObject }): JsonObject {
  if (text.startsWith('{')) return manifest;
  const [document] = decodeDocuments(text, 'manifest.yaml');
  if (document === undefined || !isJsonObject(document.value)) throw new Error('the YAML holds no object');
  return document.value;
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
      body: stringifyJson(step.patch),
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

/**
 * Hostile charts stall their own render, with a reason naming the limit that stopped it: helm's own
 * guard against a template including itself, the time limit for a template that loops, the memory and
 * output limits for a huge render; and what spec.helm asks of the tree is checked before helm runs.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ResolvedHelmSpec } from '../../src/api/applyset-types.js';
import { HelmError } from '../../src/helm/helm-error.js';
import { renderCheckoutChart } from '../../src/helm/render-chart.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
const MIB = 1024 * 1024;
import type { FileTree } from '../harness/git-server.js';
import { helmBinary } from '../harness/helm-binary.js';
import { hugeChart, recursiveChart } from './test-charts.js';

const helm: ResolvedHelmSpec = {
  chart: undefined,
  releaseName: 'r',
  namespace: 'team-a',
  values: {},
  valuesFiles: [],
  valuesFrom: [],
  includeCRDs: true,
  pruneCRDs: false,
  skipTests: true,
};

let binary: string;
const dirs: string[] = [];

beforeAll(async () => {
  binary = await helmBinary();
});

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tree(files: FileTree): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hostile-chart-'));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

/** The HelmError a render ends in, with how long it took. */
async function failure(
  files: FileTree,
  request: { options?: object; limits?: object; helm?: Partial<ResolvedHelmSpec>; sourcePath?: string } = {},
): Promise<{ error: HelmError; ms: number }> {
  const started = Date.now();
  try {
    await renderCheckoutChart(await tree(files), {
      sourcePath: request.sourcePath ?? '',
      helm: { ...helm, ...request.helm },
      options: { ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary, ...request.options },
      ...(request.limits === undefined ? {} : { limits: request.limits }),
    });
  } catch (error) {
    if (!(error instanceof HelmError)) throw error;
    return { error, ms: Date.now() - started };
  }
  throw new Error('the render succeeded');
}

const loopingChart: FileTree = {
  'Chart.yaml': 'apiVersion: v2\nname: busy\nversion: 0.1.0\n',
  'values.yaml': 'body: "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"\n',
  // tpl of a value: what an attacker controlling values would write.
  'templates/busy.yaml': 'x: {{ tpl .Values.body . }}\n',
};

describe('a hostile chart', () => {
  it("that includes itself ends by helm's own recursion guard, as a failed render", async () => {
    const { error } = await failure(recursiveChart);
    expect(error.reason).toBe('HelmTemplateFailed');
    expect(error.intent).toBe('stalled');
    expect(error.message).toMatch(/^helm template \. failed: .*nested reference/);
    expect(error.message.length).toBeLessThan(2100);
  });

  it('that loops (tpl of a value) ends by the time limit, named', async () => {
    const { error, ms } = await failure(loopingChart, { options: { timeoutMs: 2_000 } });
    expect(error.message).toBe(
      'helm template . was stopped: it ran past its time limit of 2 s (--kustomize-timeout, which bounds every build)',
    );
    expect(ms).toBeLessThan(10_000);
  });

  it('that renders 100 MB ends by the memory limit before it prints', async () => {
    const { error } = await failure(hugeChart(100));
    expect(error.message).toBe(
      'helm template . was stopped: it used more than its memory limit of 256 MiB (--kustomize-max-memory, which bounds every build)',
    );
  }, 60_000);

  it('that renders more than a set may hold ends by the output limit', async () => {
    const { error } = await failure(hugeChart(6), { limits: { maxSetBytes: 4 * MIB } });
    expect(error.message).toBe(
      "helm template . was stopped: it printed more than 4 MiB, the limit of a set's manifests",
    );
  }, 60_000);
});

describe('what spec.helm asks of the tree', () => {
  it('refuses a path without Chart.yaml, naming it', async () => {
    const { error } = await failure(
      { 'apps/web/deploy.yaml': 'kind: ConfigMap\n' },
      { sourcePath: 'apps/web' },
    );
    expect(error.reason).toBe('HelmChartRefused');
    expect(error.message).toBe(
      "helm template apps/web: spec.helm is set, but apps/web (spec.source.path) holds no Chart.yaml; point spec.source.path at the chart's directory",
    );
  });

  it('refuses a values file the source does not hold', async () => {
    const { error } = await failure(recursiveChart, { helm: { valuesFiles: ['values/missing.yaml'] } });
    expect(error.message).toBe(
      'helm template .: spec.helm.valuesFiles names values/missing.yaml, which the source does not hold',
    );
  });

  it('names a values file helm cannot read by its path in the source, not the private copy', async () => {
    const { error } = await failure(
      { ...recursiveChart, 'templates/loop.yaml': 'x: 1\n', 'values/bad.yaml': 'a: [\n' },
      { helm: { valuesFiles: ['values/bad.yaml'] } },
    );
    expect(error.message).toMatch(/^helm template \. failed: .*values\/bad\.yaml/);
    expect(error.message).not.toContain(os.tmpdir());
  });

  it('says when helm is not installed, as retryable', async () => {
    const { error } = await failure(recursiveChart, { options: { helmBinary: '/nonexistent/helm' } });
    expect(error.reason).toBe('HelmUnavailable');
    expect(error.intent).toBe('retryable');
  });
});

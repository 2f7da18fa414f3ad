/**
 * What a render makes of a spec.helm.valuesFrom value it cannot take: helm's YAML error names the
 * entry, never the render's private directory; a value over the per-file limit is refused before helm
 * runs.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ResolvedHelmSpec } from '../../src/api/applyset-types.js';
import { HelmError } from '../../src/helm/helm-error.js';
import { renderCheckoutChart } from '../../src/helm/render-chart.js';
import type { ValuesFromDocument } from '../../src/helm/values-from-document.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { helmBinary } from '../harness/helm-binary.js';

const helm: ResolvedHelmSpec = {
  chart: undefined,
  releaseName: 'app',
  namespace: 'team-a',
  values: {},
  valuesFiles: [],
  valuesFrom: [],
  includeCRDs: true,
  pruneCRDs: false,
  skipTests: true,
};

const document = (text: string): ValuesFromDocument => ({
  field: 'spec.helm.valuesFrom[0]',
  from: 'ConfigMap team-a/app-values, key values.yaml',
  text,
  targetPath: undefined,
  secret: false,
});

describe('a valuesFrom value a render cannot take', () => {
  let checkout: string;
  let binary: string;

  beforeAll(async () => {
    binary = await helmBinary();
    checkout = await mkdtemp(path.join(os.tmpdir(), 'helm-values-from-'));
    await mkdir(path.join(checkout, 'chart', 'templates'), { recursive: true });
    await writeFile(
      path.join(checkout, 'chart', 'Chart.yaml'),
      'apiVersion: v2\nname: app\nversion: 0.1.0\n',
    );
    await writeFile(
      path.join(checkout, 'chart', 'templates', 'cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: {{ .Values.k | default "none" | quote }}\n',
    );
  });

  afterAll(() => rm(checkout, { recursive: true, force: true }));

  const render = (text: string, maxFileBytes?: number) =>
    renderCheckoutChart(checkout, {
      sourcePath: 'chart',
      helm,
      options: { ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary },
      chart: { valuesFrom: [document(text)] },
      ...(maxFileBytes === undefined ? {} : { limits: { maxFileBytes } }),
    }).then(
      () => undefined,
      (error: unknown) => error,
    );

  it("fails with helm's message naming the entry when the value is not YAML", async () => {
    const error = await render('k: [unclosed\n');
    expect(error).toBeInstanceOf(HelmError);
    expect((error as HelmError).reason).toBe('HelmTemplateFailed');
    expect((error as HelmError).message).toContain('spec.helm.valuesFrom[0]');
    expect((error as HelmError).message).not.toContain(os.tmpdir());
  });

  it('refuses a value over the per-file limit before helm runs, naming the entry and the object', async () => {
    const error = await render(`k: ${'x'.repeat(64)}\n`, 32);
    expect(error).toBeInstanceOf(HelmError);
    expect((error as HelmError).reason).toBe('HelmChartRefused');
    expect((error as HelmError).message).toBe(
      'helm template chart: spec.helm.valuesFrom[0] names ConfigMap team-a/app-values, key values.yaml, which is 68 bytes, over the limit of 32 bytes per file',
    );
  });
});

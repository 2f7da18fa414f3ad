/**
 * A chart's values file encrypted with sops: without spec.decryption the set stalls naming the file
 * (helm would read its ciphertext as values); with it, the file is decrypted on its way to helm, into
 * the render's memory-backed scratch, and the render sees the plain values.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { renderCheckoutChart } from '../../src/helm/render-chart.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { decryptSopsFile, isSopsFile } from '../../src/sops/decrypt-sops-file.js';
import { readRevisionFiles } from '../../src/source/decrypt-revision.js';
import { directoryReader } from '../../src/source/directory-reader.js';
import { helmBinary } from '../harness/helm-binary.js';
import { SOPS_TIMEOUT_MS, startSopsTool, type AgeKey, type SopsTool } from '../harness/sops-tool.js';

const MARKER = 'HelmPlainMarker8c2';

describe('a chart with a sops-encrypted values file', () => {
  let sops: SopsTool;
  let key: AgeKey;
  let binary: string;
  let checkout: string;
  let scratch: string;

  beforeAll(async () => {
    [sops, binary] = await Promise.all([startSopsTool(), helmBinary()]);
    key = await sops.ageKey();
    checkout = await mkdtemp(path.join(os.tmpdir(), 'helm-sops-'));
    const files: Record<string, string> = {
      'chart/Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\n',
      'chart/values.yaml': 'password: none\n',
      'chart/templates/secret.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  password: {{ .Values.password | quote }}\n',
      'secrets/prod.yaml': await sops.encrypt('prod.yaml', `password: ${MARKER}\n`, [key.recipient]),
    };
    for (const [name, text] of Object.entries(files)) {
      await mkdir(path.join(checkout, path.dirname(name)), { recursive: true });
      await writeFile(path.join(checkout, name), text);
    }
    scratch = await mkdtemp(path.join('/dev/shm', 'helm-sops-scratch-'));
  }, SOPS_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    if (checkout !== undefined) await rm(checkout, { recursive: true, force: true });
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    await sops?.cleanup();
  });

  const helm = {
    chart: undefined,
    releaseName: 'app',
    namespace: 'team-a',
    values: {},
    valuesFiles: ['secrets/prod.yaml'],
    valuesFrom: [],
    includeCRDs: true,
    pruneCRDs: false,
    skipTests: true,
  };

  it('stalls without spec.decryption, naming the file', async () => {
    const resolved = resolveApplySetSpec(
      {
        source: { url: 'https://git.example/r.git', ref: { branch: 'main' }, path: 'chart' },
        prune: true,
        helm: { valuesFiles: ['../secrets/prod.yaml'] },
      },
      { name: 'app', namespace: 'team-a' },
    );
    if (!resolved.ok) throw new Error(JSON.stringify(resolved.errors));
    const files = await readRevisionFiles(
      directoryReader(checkout),
      { reader: {} as KubeClient, user: undefined, namespace: 'team-a' },
      resolved.spec,
      {
        revision: 'r',
        signal: AbortSignal.timeout(30_000),
        log: { error: () => undefined },
        kustomize: { ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary },
      },
    );
    expect('done' in files && files.done).toMatchObject({
      kind: 'stalled',
      reason: 'DecryptionNotConfigured',
      message: expect.stringContaining('secrets/prod.yaml'),
    });
  });

  it('renders the plain values once decrypted, in memory-backed scratch that is removed after', async () => {
    const rendered = await renderCheckoutChart(checkout, {
      sourcePath: 'chart',
      helm,
      options: { ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary, decryptionScratchDir: scratch },
      transform: async (filePath, bytes) =>
        isSopsFile(filePath, bytes)
          ? ((await decryptSopsFile(filePath, bytes, [key.identity])) ?? bytes)
          : bytes,
      inMemory: true,
    });
    expect(rendered.text).toContain(`password: "${MARKER}"`);
    expect(await readdir(scratch)).toEqual([]);
  });
});

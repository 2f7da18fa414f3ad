/**
 * The render with the target cluster's capabilities and spec.helm.valuesFrom, against `helm template`
 * run directly with the same `--kube-version`, `--api-versions` and values files in helm's order:
 * byte for byte.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ResolvedHelmSpec } from '../../src/api/applyset-types.js';
import type { ValuesFromDocument } from '../../src/helm/values-from-document.js';
import type { ClusterCapabilities } from '../../src/kube/cluster-capabilities.js';
import { DEFAULT_KUSTOMIZE_OPTIONS } from '../../src/kustomize/run-kustomize.js';
import { directoryReader } from '../../src/source/directory-reader.js';
import { helmBinary } from '../harness/helm-binary.js';

const execFileAsync = promisify(execFile);

/** A chart that branches on the cluster's APIs and version, and shows where each value came from. */
const chart: Record<string, string> = {
  'chart/Chart.yaml': 'apiVersion: v2\nname: probe\nversion: 0.1.0\nkubeVersion: ">=1.20.0-0"\n',
  'chart/values.yaml': 'a: chart\nb: chart\nc: chart\nd: chart\nimage:\n  tag: chart\n',
  'chart/templates/capabilities.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-capabilities
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  major: {{ .Capabilities.KubeVersion.Major | quote }}
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  serviceMonitor: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" | quote }}
  monitoringGroup: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
  deployment: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  semver: {{ semverCompare ">=1.33.0-0" .Capabilities.KubeVersion.Version | quote }}
  values: {{ printf "%s %s %s %s %s" .Values.a .Values.b .Values.c .Values.d .Values.image.tag | quote }}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ .Release.Name }}
spec:
  endpoints: [{port: http}]
{{- end }}
`,
  'values/prod.yaml': 'a: file\nb: file\nc: file\nd: file\n',
};

const helm: ResolvedHelmSpec = {
  chart: undefined,
  releaseName: 'probe',
  namespace: 'team-a',
  values: { d: 'inline' },
  valuesFiles: ['values/prod.yaml'],
  valuesFrom: [],
  includeCRDs: true,
  pruneCRDs: false,
  skipTests: true,
};

const valuesFrom: ValuesFromDocument[] = [
  {
    field: 'spec.helm.valuesFrom[0]',
    from: 'ConfigMap team-a/v, key values.yaml',
    text: 'b: from\nc: from\nd: from\n',
    targetPath: undefined,
    secret: false,
  },
  {
    field: 'spec.helm.valuesFrom[1]',
    from: 'Secret team-a/s, key values.yaml',
    text: 'c: later\n',
    targetPath: undefined,
    secret: true,
  },
  {
    field: 'spec.helm.valuesFrom[2]',
    from: 'ConfigMap team-a/t, key tag',
    text: 'v9',
    targetPath: ['image', 'tag'],
    secret: false,
  },
];

const target: ClusterCapabilities = {
  kubeVersion: '1.33.13',
  apiVersions: [
    'apps/v1',
    'apps/v1/Deployment',
    'monitoring.coreos.com/v1',
    'monitoring.coreos.com/v1/ServiceMonitor',
    'v1',
    'v1/Pod',
  ],
};

describe('a chart rendered for its target cluster, against helm template', () => {
  let dir: string;
  let binary: string;

  beforeAll(async () => {
    binary = await helmBinary();
    dir = await mkdtemp(path.join(os.tmpdir(), 'helm-capabilities-'));
    for (const [name, text] of Object.entries(chart)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), text);
    }
    // What a user would write to get the same values: the ConfigMap's and Secret's keys as files.
    await writeFile(path.join(dir, 'from-0.yaml'), 'b: from\nc: from\nd: from\n');
    await writeFile(path.join(dir, 'from-1.yaml'), 'c: later\n');
    await writeFile(path.join(dir, 'from-2.yaml'), 'image:\n  tag: v9\n');
    await writeFile(path.join(dir, 'inline.yaml'), 'd: inline\n');
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  const render = async (capabilities?: ClusterCapabilities) => {
    const read = await directoryReader(dir).read('chart', {
      options: { ...DEFAULT_KUSTOMIZE_OPTIONS, helmBinary: binary },
      helm,
      chart: {
        valuesFrom,
        ...(capabilities === undefined ? {} : { capabilities: async () => capabilities }),
      },
      signal: AbortSignal.timeout(60_000),
    });
    if (read.kind !== 'chart') throw new Error('chart was not rendered as a chart');
    return read.rendered.text;
  };

  const helmTemplate = async (flags: string[]) => {
    const files = ['values/prod.yaml', 'from-0.yaml', 'from-1.yaml', 'from-2.yaml', 'inline.yaml'];
    const args = [
      'template',
      'probe',
      path.join(dir, 'chart'),
      '--namespace',
      'team-a',
      '--include-crds',
      '--skip-tests',
      ...flags,
    ];
    for (const file of files) args.push('-f', path.join(dir, file));
    return (await execFileAsync(binary, args)).stdout;
  };

  it('renders the branches of the target cluster byte for byte as helm template --kube-version --api-versions does', async () => {
    const ours = await render(target);
    const theirs = await helmTemplate([
      '--kube-version',
      '1.33.13',
      '--api-versions',
      target.apiVersions.join(','),
    ]);
    expect(ours).toBe(theirs);
    expect(ours).toContain('kubeVersion: "v1.33.13"');
    expect(ours).toContain('serviceMonitor: "true"');
    expect(ours).toContain('kind: ServiceMonitor');
    // values.yaml < valuesFiles < valuesFrom, in order < inline values.
    expect(ours).toContain('values: "file from later inline v9"');
  });

  it("without the target's capabilities, renders helm's defaults, the ServiceMonitor left out", async () => {
    const ours = await render();
    expect(ours).toBe(await helmTemplate([]));
    expect(ours).toContain('serviceMonitor: "false"');
    expect(ours).not.toContain('kind: ServiceMonitor');
  });
});

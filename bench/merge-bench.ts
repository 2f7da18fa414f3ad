// Micro-benchmark of the merge engine: patches per second for a large Deployment and for a
// ConfigMap with 1,000 keys. Run: node --import tsx bench/merge-bench.ts
import { performance } from 'node:perf_hooks';
import type { JsonObject } from '../src/manifests/json-value.js';
import { builtinPatchMeta } from '../src/merge/builtin-patch-meta.js';
import { computeApplyPatch } from '../src/merge/compute-apply-patch.js';
import { buildLastAppliedConfiguration } from '../src/merge/last-applied-configuration.js';
import type { PatchMeta } from '../src/merge/patch-meta.js';

function container(index: number, image: string): JsonObject {
  return {
    name: `c${index}`,
    image,
    args: ['--port', String(8000 + index), '--verbose'],
    env: Array.from({ length: 20 }, (_, e) => ({ name: `VAR_${e}`, value: `value-${index}-${e}` })),
    ports: [{ containerPort: 8000 + index }, { containerPort: 9000 + index, protocol: 'UDP' }],
    volumeMounts: Array.from({ length: 5 }, (_, v) => ({ name: `vol${v}`, mountPath: `/mnt/${index}/${v}` })),
    resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '100m', memory: '128Mi' } },
  };
}

function deployment(image: string): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'big', namespace: 'default', labels: { app: 'big', team: 'core' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'big' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'big' }, annotations: { 'example.com/checksum': 'abc' } },
        spec: {
          containers: Array.from({ length: 10 }, (_, i) => container(i, image)),
          volumes: Array.from({ length: 5 }, (_, v) => ({ name: `vol${v}`, emptyDir: {} })),
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'big', effect: 'NoSchedule' }],
        },
      },
    },
  };
}

function configMap(version: number): JsonObject {
  const data: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) data[`key-${i}`] = `value-${i}-${i % 10 === 0 ? version : 0}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default' }, data };
}

/** The live object after the previous manifest was applied, with a few server-side additions. */
function liveFrom(manifest: JsonObject): JsonObject {
  const { modified } = buildLastAppliedConfiguration(manifest);
  const metadata = { ...(modified.metadata as JsonObject), uid: 'u-1', resourceVersion: '42', generation: 2 };
  return { ...modified, metadata, status: { observedGeneration: 2 } };
}

function bench(name: string, meta: PatchMeta, previous: JsonObject, next: JsonObject): void {
  const current = liveFrom(previous);
  const run = (manifest: JsonObject) => computeApplyPatch({ manifest, current, meta });
  if (run(next).kind !== 'patch' || run(previous).kind !== 'unchanged')
    throw new Error(`${name}: unexpected outcome`);
  for (const [label, manifest] of [
    ['changed', next],
    ['unchanged', previous],
  ] as const) {
    for (let i = 0; i < 200; i++) run(manifest);
    let count = 0;
    const start = performance.now();
    while (performance.now() - start < 2000) {
      run(manifest);
      count++;
    }
    const seconds = (performance.now() - start) / 1000;
    console.log(`${name} (${label}): ${Math.round(count / seconds)} patches/s`);
  }
}

const deploymentMeta = builtinPatchMeta({ group: 'apps', version: 'v1', kind: 'Deployment' });
const configMapMeta = builtinPatchMeta({ group: '', version: 'v1', kind: 'ConfigMap' });
if (deploymentMeta === undefined || configMapMeta === undefined)
  throw new Error('built-in patch metadata missing');
bench('Deployment, 10 containers x 20 env', deploymentMeta, deployment('app:1'), deployment('app:2'));
bench('ConfigMap, 1,000 keys', configMapMeta, configMap(1), configMap(2));

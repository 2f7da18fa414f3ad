// Regenerates src/merge/builtin-patch-meta.json, the offline patch-metadata table for built-in kinds,
// from a running API server's OpenAPI v3 (kubeconfig from KUBECONFIG):
//   KUBECONFIG=... node --import tsx scripts/gen-patch-meta.ts
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import type { JsonValue } from '../src/manifests/json-value.js';
import { buildPatchMetaTable } from '../src/merge/openapi-patch-meta.js';

// Built-in groups only: CRDs and aggregated APIs are looked up live, never from this table.
const GROUP_VERSIONS = [
  'api/v1',
  'apis/apps/v1',
  'apis/batch/v1',
  'apis/policy/v1',
  'apis/rbac.authorization.k8s.io/v1',
  'apis/networking.k8s.io/v1',
  'apis/autoscaling/v2',
  'apis/storage.k8s.io/v1',
  'apis/scheduling.k8s.io/v1',
  'apis/discovery.k8s.io/v1',
  'apis/coordination.k8s.io/v1',
  'apis/admissionregistration.k8s.io/v1',
];
// Lists and option kinds carry no manifests worth applying.
const SKIP_KIND = /(List|Options|Review|Status|Scale|Eviction|Binding)$/;

async function get(kc: KubeConfig, path: string): Promise<JsonValue> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('no current cluster in the kubeconfig');
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const url = new URL(path, cluster.server);
  return new Promise((resolve, reject) => {
    const request = https.get(url, options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        if (response.statusCode !== 200)
          reject(new Error(`GET ${path}: HTTP ${response.statusCode}: ${body.slice(0, 200)}`));
        else resolve(JSON.parse(body) as JsonValue);
      });
    });
    request.on('error', reject);
  });
}

async function main(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const documents = await Promise.all(GROUP_VERSIONS.map((gv) => get(kc, `/openapi/v3/${gv}`)));
  const table = buildPatchMetaTable(documents);
  const sorted = Object.fromEntries(
    Object.keys(table)
      .filter((key) => !SKIP_KIND.test(key) || key.endsWith('RoleBinding'))
      .sort()
      .map((key) => [
        key,
        Object.fromEntries(Object.entries(table[key] ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))),
      ]),
  );
  const version = await get(kc, '/version');
  const text = JSON.stringify(
    { generatedFrom: (version as { gitVersion?: string }).gitVersion ?? 'unknown', kinds: sorted },
    null,
    2,
  );
  await writeFile(new URL('../src/merge/builtin-patch-meta.json', import.meta.url), `${text}\n`);
  console.log(`wrote ${Object.keys(sorted).length} kinds`);
}

await main();

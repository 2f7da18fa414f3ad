// Replays sequences of the kubectl differential test (test/merge-differential) step by step and prints
// each step's manifest or writer patch, both patches (kubectl's read from its -v=8 request log) and
// both live objects as compared.
//
//   APPLYSET_TEST_KUBECONFIG=<admin kubeconfig> node --import tsx scripts/replay-differential.ts <seed> [count]
//
// `npm run cluster:up` prints a kubeconfig to use. The namespaces and CRD it creates are left for
// inspection.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../src/kube/kube-client.js';
import { createOpenApiPatchMetaSource } from '../src/kube/openapi-patch-meta-source.js';
import { createNamespace, uniqueName } from '../test/harness/test-cluster.js';
import { generateSequence } from '../test/merge-differential/generate-sequence.js';
import { installCrd } from '../test/merge-differential/install-crd.js';
import { comparable, runSequence, type StepReport } from '../test/merge-differential/run-sequence.js';

async function main(): Promise<void> {
  const [seedText, countText] = process.argv.slice(2);
  const kubeconfigPath = process.env.APPLYSET_TEST_KUBECONFIG ?? process.env.KUBECONFIG;
  if (seedText === undefined || kubeconfigPath === undefined) {
    console.error('usage: APPLYSET_TEST_KUBECONFIG=<kubeconfig> replay-differential.ts <seed> [count]');
    process.exit(2);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const client = createKubeClient({ kubeConfig: kc });
  const namespaceKubectl = uniqueName('replay-kubectl');
  const namespaceEngine = uniqueName('replay-engine');
  const [crd] = await Promise.all([
    installCrd(kc, uniqueName('replay')),
    createNamespace(kc, namespaceKubectl),
    createNamespace(kc, namespaceEngine),
  ]);
  const print = (report: StepReport) => {
    const { step } = report;
    console.log(
      `\n=== step ${report.index}: ${step.type === 'apply' ? 'apply' : `writer: ${step.description}`}`,
    );
    console.log(step.type === 'apply' ? JSON.stringify(step.manifest, null, 2) : JSON.stringify(step.patch));
    console.log(`--- kubectl: ${report.kubectl.verdict}  ${report.kubectl.output.trim()}`);
    if (report.kubectl.patch !== undefined) console.log(`    patch: ${report.kubectl.patch}`);
    console.log(`--- engine:  ${report.engine.verdict}  ${report.engine.output.trim()}`);
    if (report.engine.patch !== undefined) console.log(`    patch: ${report.engine.patch}`);
    const { patch: patchKubectl } = report.kubectl;
    const { patch: patchEngine } = report.engine;
    if (patchKubectl !== undefined && patchEngine !== undefined && step.type === 'apply') {
      const same =
        patchKubectl.split(namespaceKubectl).join('<ns>') === patchEngine.split(namespaceEngine).join('<ns>');
      console.log(`--- patches ${same ? 'identical' : 'DIFFER'} (namespace substituted)`);
    }
    console.log('--- live (kubectl namespace, as compared):');
    console.log(JSON.stringify(comparable(report.liveKubectl, namespaceKubectl, namespaceEngine), null, 2));
    console.log('--- live (engine namespace, as compared):');
    console.log(JSON.stringify(comparable(report.liveEngine, namespaceKubectl, namespaceEngine), null, 2));
  };
  const context = {
    client,
    metaSource: createOpenApiPatchMetaSource({ client }),
    kubectl: process.env.DIFF_KUBECTL ?? 'kubectl',
    kubeconfigPath,
    kubectlCacheDir: await mkdtemp(join(tmpdir(), 'applyset-kubectl-cache-')),
    namespaceKubectl,
    namespaceEngine,
    crdGroup: crd.gvk.group,
    onStep: print,
  };
  const first = Number(seedText);
  let failed = false;
  for (let seed = first; seed < first + Number(countText ?? '1'); seed++) {
    const sequence = generateSequence(seed, crd.gvk.group);
    console.log(`\n##### seed ${seed}: ${sequence.kind} ${sequence.name}, ${sequence.steps.length} steps`);
    try {
      await runSequence(context, sequence);
      console.log(`##### seed ${seed}: agree`);
    } catch (error) {
      failed = true;
      console.log(`##### ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  console.log(`\nnamespaces kept: ${namespaceKubectl} (kubectl), ${namespaceEngine} (engine)`);
  process.exit(failed ? 1 : 0);
}

await main();

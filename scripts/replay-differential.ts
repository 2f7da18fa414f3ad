// Replays sequences of the kubectl differential test (test/merge-differential) step by step and prints
// each step's manifest or writer patch, both patches (kubectl's read from its -v=9 request log) and
// both live objects as compared.
//
//   APPLYSET_TEST_KUBECONFIG=<admin kubeconfig> node --import tsx scripts/replay-differential.ts <seed> [count]
//   APPLYSET_TEST_KUBECONFIG=<admin kubeconfig> node --import tsx scripts/replay-differential.ts --finding <dir>
//
// The second form replays a reproduction directory written by `npm run fuzz` (its sequence.json, the
// minimized steps). `npm run cluster:up` prints a kubeconfig to use. The namespaces and CRD it creates
// are left for inspection.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJsonLossless } from '../src/manifests/lossless-json.js';
import { KubeConfig } from '@kubernetes/client-node';
import { openDiffSession } from '../test/merge-differential/diff-session.js';
import {
  generateSequence,
  renameSequence,
  type DiffSequence,
} from '../test/merge-differential/generate-sequence.js';
import { comparable } from '../test/merge-differential/compare-live.js';
import { runSequence, type StepReport } from '../test/merge-differential/run-sequence.js';

function printer(nsK: string, nsE: string) {
  return (report: StepReport) => {
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
      const same = patchKubectl.split(nsK).join('<ns>') === patchEngine.split(nsE).join('<ns>');
      console.log(`--- patches ${same ? 'identical' : 'DIFFER'} (namespace substituted)`);
    }
    console.log('--- live (kubectl namespace, as compared):');
    console.log(JSON.stringify(comparable(report.liveKubectl, nsK, nsE), null, 2));
    console.log('--- live (engine namespace, as compared):');
    console.log(JSON.stringify(comparable(report.liveEngine, nsK, nsE), null, 2));
  };
}

/** The sequences to replay: generated from seeds, or the one a fuzz finding recorded. */
async function sequencesFromArguments(
  args: readonly string[],
): Promise<(crdGroup: string) => DiffSequence[]> {
  if (args[0] === '--finding' && args[1] !== undefined) {
    const recorded = parseJsonLossless(
      await readFile(join(args[1], 'sequence.json'), 'utf8'),
    ) as DiffSequence;
    // The finding's CRD group was its run's own: the custom resource takes this run's group.
    return (crdGroup) => [renameSequence(withCrdGroup(recorded, crdGroup), `${recorded.name}-replay`)];
  }
  const first = Number(args[0]);
  const count = Number(args[1] ?? '1');
  return (crdGroup) => Array.from({ length: count }, (_, i) => generateSequence(first + i, crdGroup));
}

function withCrdGroup(sequence: DiffSequence, crdGroup: string): DiffSequence {
  const steps = sequence.steps.map((step) => {
    if (step.type !== 'apply' || !String(step.manifest.apiVersion).endsWith('.applyset.example/v1'))
      return step;
    return { ...step, manifest: { ...step.manifest, apiVersion: `${crdGroup}/v1` } };
  });
  return { ...sequence, steps };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const kubeconfigPath = process.env.APPLYSET_TEST_KUBECONFIG ?? process.env.KUBECONFIG;
  if (args[0] === undefined || kubeconfigPath === undefined) {
    console.error(
      'usage: APPLYSET_TEST_KUBECONFIG=<kubeconfig> replay-differential.ts <seed> [count] | --finding <dir>',
    );
    process.exit(2);
  }
  const sequencesFor = await sequencesFromArguments(args);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const session = await openDiffSession({ kubeConfig, kubeconfigPath, prefix: 'replay' });
  const context = { ...session, onStep: printer(session.namespaceKubectl, session.namespaceEngine) };
  let failed = false;
  for (const sequence of sequencesFor(context.crdGroup)) {
    console.log(
      `\n##### seed ${sequence.seed}: ${sequence.kind} ${sequence.name}, ${sequence.steps.length} steps`,
    );
    try {
      await runSequence(context, sequence);
      console.log(`##### seed ${sequence.seed}: agree`);
    } catch (error) {
      failed = true;
      console.log(`##### ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  console.log(
    `\nnamespaces kept: ${context.namespaceKubectl} (kubectl), ${context.namespaceEngine} (engine)`,
  );
  process.exit(failed ? 1 : 0);
}

await main();

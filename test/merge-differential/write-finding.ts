import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiffSequence } from './generate-sequence.js';
import type { Disagreement } from './minimize-sequence.js';
import { renderYaml } from './yaml11-scalars.js';
import { comparable, differingPaths } from './compare-live.js';
import type { DiffContext, StepReport } from './run-sequence.js';
import { stringifyJson } from '../../src/manifests/lossless-json.js';

export interface Finding {
  /** The disagreement as first seen, with the whole sequence up to it. */
  readonly original: Disagreement;
  /** The shortest sequence found that still disagrees. */
  readonly minimal: Disagreement;
  /** Every step of a verbose run of `minimal`, or empty when that run agreed (a flaky finding). */
  readonly reports: readonly StepReport[];
}

/**
 * Writes one disagreement as a directory a person can read and replay without the fuzzer:
 *   README.md            what disagreed, the seed, how to replay
 *   sequence.json        the minimal sequence (scripts/replay-differential.ts --finding <dir>)
 *   steps/NN-apply.json  each manifest version, as kubectl received it (.yaml with YAML 1.1 lines)
 *   steps/NN-write.json  each other writer's change: description, patch type, body
 *   live-kubectl.json, live-engine.json   both live objects after the last step, as compared
 *   patches.txt          the request bodies of the last step, kubectl's (from its -v=9 log) and ours
 *   diff.txt             the differing paths
 * Returns the directory.
 */
export async function writeFinding(root: string, context: DiffContext, finding: Finding): Promise<string> {
  const { minimal, original, reports } = finding;
  const dir = join(root, `seed-${original.sequence.seed}`);
  await mkdir(join(dir, 'steps'), { recursive: true });
  await writeSteps(join(dir, 'steps'), minimal.sequence);
  await writeFile(join(dir, 'sequence.json'), `${stringifyJson(minimal.sequence, 2)}\n`);
  const last = reports.at(-1);
  const live = (side: 'liveKubectl' | 'liveEngine') =>
    comparable(last?.[side], context.namespaceKubectl, context.namespaceEngine);
  if (last !== undefined) {
    await writeFile(join(dir, 'live-kubectl.json'), `${stringifyJson(live('liveKubectl'), 2)}\n`);
    await writeFile(join(dir, 'live-engine.json'), `${stringifyJson(live('liveEngine'), 2)}\n`);
    await writeFile(
      join(dir, 'patches.txt'),
      `kubectl: ${last.kubectl.verdict} ${last.kubectl.output.trim()}\n  ${last.kubectl.patch ?? '(no body)'}\n` +
        `engine:  ${last.engine.verdict} ${last.engine.output.trim()}\n  ${last.engine.patch ?? '(no body)'}\n`,
    );
    const paths = differingPaths(live('liveKubectl'), live('liveEngine'));
    await writeFile(
      join(dir, 'diff.txt'),
      paths
        .map((d) => `${d.path}\n  kubectl: ${stringifyJson(d.a)}\n  engine:  ${stringifyJson(d.b)}\n`)
        .join('') || '(live objects equal: the verdicts differ, see patches.txt)\n',
    );
  }
  await writeFile(join(dir, 'README.md'), readme(finding, dir));
  return dir;
}

async function writeSteps(dir: string, sequence: DiffSequence): Promise<void> {
  for (const [index, step] of sequence.steps.entries()) {
    const n = String(index).padStart(2, '0');
    if (step.type === 'apply') {
      // What kubectl read: the YAML text when the step has YAML 1.1 lines, else the manifest as JSON.
      if (step.yaml11 === undefined) {
        await writeFile(join(dir, `${n}-apply.json`), `${stringifyJson(step.manifest, 2)}\n`);
      } else {
        await writeFile(join(dir, `${n}-apply.yaml`), renderYaml(step.manifest, step.yaml11));
      }
    } else {
      const { description, contentType, patch } = step;
      await writeFile(
        join(dir, `${n}-write.json`),
        `${stringifyJson({ description, contentType, patch }, 2)}\n`,
      );
    }
  }
}

function readme({ original, minimal, reports }: Finding, dir: string): string {
  const { seed, kind } = original.sequence;
  return [
    `# Disagreement: seed ${seed} (${kind})`,
    '',
    minimal.mismatch.message.split('\n')[0] ?? '',
    '',
    `The generated sequence disagreed at step ${original.mismatch.stepIndex} of ` +
      `${original.sequence.steps.length}; the minimal sequence here has ${minimal.sequence.steps.length} steps.`,
    reports.length === 0
      ? 'A verbose run of the minimal sequence agreed: the finding may depend on timing; replay the seed.'
      : 'A verbose run of the minimal sequence disagreed again; its last step is recorded here.',
    '',
    'Replay with a running control plane (`npm run cluster:up` prints the kubeconfig):',
    '',
    '```sh',
    `APPLYSET_TEST_KUBECONFIG=<kubeconfig> node --import tsx scripts/replay-differential.ts --finding ${dir}`,
    `APPLYSET_TEST_KUBECONFIG=<kubeconfig> node --import tsx scripts/replay-differential.ts ${seed}`,
    `DIFF_SEED=${seed} DIFF_SEQUENCES=1 npm test -- --selectProjects integration --testPathPattern merge-differential`,
    '```',
    '',
  ].join('\n');
}

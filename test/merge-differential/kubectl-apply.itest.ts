import { rm } from 'node:fs/promises';
import PQueue from 'p-queue';
import { adminKubeConfig, adminKubeconfigPath } from '../harness/test-cluster.js';
import { openDiffSession } from './diff-session.js';
import { DIFF_KINDS, generateSequence, kindOfSeed } from './generate-sequence.js';
import { runSequence, type DiffContext } from './run-sequence.js';
import { planSeedBatches } from './seed-plan.js';

/**
 * The merge engine against the reference: seeded random sequences of applies and other writers'
 * changes, each manifest version applied with the real `kubectl apply` into one namespace and with our
 * engine into another; verdicts and live objects must agree after every step.
 *
 * Two batches (seed-plan.ts): the fixed window, the same in every run, and a rotating batch whose
 * seeds come from the UTC date, so every day explores new sequences. Both are named in the test titles
 * and every failure names its seed.
 *
 * Replay a failing seed: `DIFF_SEED=<seed> DIFF_SEQUENCES=1 npm test -- --selectProjects integration
 * --testPathPattern merge-differential`, or print every step's manifests, patches and live objects with
 * `scripts/replay-differential.ts <seed>`. Explore for longer with `npm run fuzz -- --minutes N`.
 *
 * Cases where kubectl itself is inconsistent: none found so far.
 *
 * Which kubectl: `DIFF_KUBECTL` names the binary, `kubectl` on PATH by default. On this machine that
 * is the Google Cloud SDK dispatcher, which runs the client matching the server's minor version
 * (v1.33 against the v1.33 control plane); `DIFF_KUBECTL=/usr/lib/google-cloud-sdk/bin/kubectl.1.32` pins the v1.32
 * client.
 */
// kubectl is a process per step; four at a time keeps two cores busy without starving the apiserver.
const CONCURRENCY = 4;

const batches = planSeedBatches(process.env, new Date());
const cases = batches
  .flatMap((batch) =>
    DIFF_KINDS.map((kind) => ({
      batch: batch.label,
      kind,
      seeds: batch.seeds.filter((s) => kindOfSeed(s) === kind),
    })),
  )
  .filter((c) => c.seeds.length > 0);

describe('client-side apply: our engine agrees with the real kubectl on the real API server', () => {
  let context: DiffContext;

  beforeAll(async () => {
    context = await openDiffSession({
      kubeConfig: adminKubeConfig(),
      kubeconfigPath: adminKubeconfigPath(),
      prefix: 'diff',
    });
    console.log(`differential seeds: ${batches.map((b) => b.label).join('; ')}`);
  });

  afterAll(async () => {
    // Objects keep writer finalizers; the namespaces and the CRD go with the control plane.
    await rm(context.kubectlCacheDir, { recursive: true, force: true });
  });

  it.each(cases)(
    '$batch, $kind: every sequence ends with the same live object and the same verdicts',
    async ({ seeds }: { seeds: number[] }) => {
      const queue = new PQueue({ concurrency: CONCURRENCY });
      const failures: string[] = [];
      await Promise.all(
        seeds.map((seed) =>
          queue.add(async () => {
            try {
              await runSequence(context, generateSequence(seed, context.crdGroup));
            } catch (error) {
              failures.push(error instanceof Error ? error.message : String(error));
            }
          }),
        ),
      );
      expect(failures).toEqual([]);
    },
    180_000,
  );
});

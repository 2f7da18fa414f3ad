// `npm run fuzz -- --minutes N [--out DIR] [--seed FIRST] [--concurrency C]`: the kubectl differential
// test (test/merge-differential) on new random seeds for N minutes. Each disagreement between kubectl
// and our engine is minimized and written as a reproduction directory under DIR (./fuzz-findings by
// default). Starts its own control plane, or uses the one APPLYSET_TEST_KUBECONFIG names.
import { randomInt } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { openDiffSession } from '../test/merge-differential/diff-session.js';
import { exploreSeeds } from '../test/merge-differential/explore-seeds.js';

// Above the fixed and the daily rotating seeds (seed-plan.ts); below 2^32, where SeededRandom wraps.
const RANDOM_SEEDS_FROM = 1_000_000_000;
const RANDOM_SEEDS_TO = 4_000_000_000;

interface FuzzOptions {
  readonly minutes: number;
  readonly out: string;
  readonly firstSeed: number;
  readonly concurrency: number;
}

function readOptions(argv: readonly string[]): FuzzOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string', default: '5' },
      out: { type: 'string', default: 'fuzz-findings' },
      seed: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
    },
  });
  const minutes = Number(values.minutes);
  const concurrency = Number(values.concurrency);
  if (!(minutes > 0) || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error('usage: npm run fuzz -- --minutes N [--out DIR] [--seed FIRST] [--concurrency C]');
  }
  const firstSeed =
    values.seed === undefined ? randomInt(RANDOM_SEEDS_FROM, RANDOM_SEEDS_TO) : Number(values.seed);
  return { minutes, out: resolve(values.out), firstSeed, concurrency };
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  let controlPlane: ControlPlane | undefined;
  let kubeconfigPath = process.env.APPLYSET_TEST_KUBECONFIG;
  if (kubeconfigPath === undefined || kubeconfigPath === '') {
    controlPlane = await startControlPlane({ ownerPid: process.pid, log: (line) => console.error(line) });
    kubeconfigPath = controlPlane.kubeconfigPath;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => void controlPlane?.stop().finally(() => process.exit(130)));
    }
  }
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const context = await openDiffSession({ kubeConfig, kubeconfigPath, prefix: 'fuzz' });
    console.log(
      `fuzzing for ${options.minutes} min from seed ${options.firstSeed}; findings go to ${options.out}`,
    );
    const started = Date.now();
    const stats = await exploreSeeds({
      context,
      firstSeed: options.firstSeed,
      deadline: started + options.minutes * 60_000,
      concurrency: options.concurrency,
      findingsDir: options.out,
      log: (line) => console.log(line),
    });
    const took = ((Date.now() - started) / 60_000).toFixed(1);
    console.log(`seeds ${options.firstSeed}..${stats.lastSeed} in ${took} min`);
    if (stats.harnessErrors > 0)
      console.log(`${stats.harnessErrors} sequences failed in the harness (see above)`);
    console.log(`${stats.sequences} sequences, ${stats.steps} steps, ${stats.disagreements} disagreements`);
    process.exitCode = stats.disagreements > 0 || stats.harnessErrors > 0 ? 1 : 0;
    await rm(context.kubectlCacheDir, { recursive: true, force: true });
  } finally {
    await controlPlane?.stop();
  }
}

await main();

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createOpenApiPatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  createNamespace,
  uniqueName,
} from '../harness/test-cluster.js';
import { DIFF_KINDS, generateSequence, kindOfSeed, type DiffKind } from './generate-sequence.js';
import { installCrd, type InstalledCrd } from './install-crd.js';
import { runSequence, type DiffContext } from './run-sequence.js';

/**
 * The merge engine against the reference: seeded random sequences of applies and other writers'
 * changes, each manifest version applied with the real `kubectl apply` into one namespace and with our
 * engine into another; verdicts and live objects must agree after every step.
 *
 * Replay a failing seed: `DIFF_SEED=<seed> DIFF_SEQUENCES=1 npm test -- --selectProjects integration
 * --testPathPattern merge-differential`, or print every step's manifests, patches and live objects with
 * `scripts/replay-differential.ts <seed>`.
 *
 * Cases where kubectl itself is inconsistent: none found so far.
 *
 * Which kubectl: `DIFF_KUBECTL` names the binary, `kubectl` on PATH by default. On this machine that
 * is the Google Cloud SDK dispatcher, which runs the client matching the server's minor version
 * (v1.33 against the v1.33 control plane); `DIFF_KUBECTL=/usr/lib/google-cloud-sdk/bin/kubectl.1.32` pins the v1.32
 * client.
 */
const BASE_SEED = Number(process.env.DIFF_SEED ?? '20250605');
const SEQUENCES = Number(process.env.DIFF_SEQUENCES ?? '210');
// kubectl is a process per step; four at a time keeps two cores busy without starving the apiserver.
const CONCURRENCY = 4;

const seeds = Array.from({ length: SEQUENCES }, (_, i) => BASE_SEED + i);
const kindsInRun = DIFF_KINDS.filter((kind) => seeds.some((seed) => kindOfSeed(seed) === kind));

describe('client-side apply: our engine agrees with the real kubectl on the real API server', () => {
  let context: DiffContext;
  let crd: InstalledCrd;
  let cacheDir: string;
  let client: KubeClient;

  beforeAll(async () => {
    const kc = adminKubeConfig();
    client = createKubeClient({ kubeConfig: kc });
    const namespaceKubectl = uniqueName('diff-kubectl');
    const namespaceEngine = uniqueName('diff-engine');
    cacheDir = await mkdtemp(join(tmpdir(), 'applyset-kubectl-cache-'));
    [crd] = await Promise.all([
      installCrd(kc, uniqueName('diff')),
      createNamespace(kc, namespaceKubectl),
      createNamespace(kc, namespaceEngine),
    ]);
    context = {
      client,
      metaSource: createOpenApiPatchMetaSource({ client }),
      kubectl: process.env.DIFF_KUBECTL ?? 'kubectl',
      kubeconfigPath: adminKubeconfigPath(),
      kubectlCacheDir: cacheDir,
      namespaceKubectl,
      namespaceEngine,
      crdGroup: crd.gvk.group,
    };
  });

  afterAll(async () => {
    // Objects keep writer finalizers; the namespaces and the CRD go with the control plane.
    await rm(cacheDir, { recursive: true, force: true });
  });

  it.each(kindsInRun)(
    '%s: every seeded sequence ends with the same live object and the same verdicts',
    async (kind: DiffKind) => {
      const queue = new PQueue({ concurrency: CONCURRENCY });
      const failures: string[] = [];
      const mine = seeds.filter((seed) => kindOfSeed(seed) === kind);
      await Promise.all(
        mine.map((seed) =>
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

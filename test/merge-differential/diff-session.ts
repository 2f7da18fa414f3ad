import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { createOpenApiPatchMetaSource } from '../../src/kube/openapi-patch-meta-source.js';
import { createNamespace, uniqueName } from '../harness/test-cluster.js';
import { installCrd } from './install-crd.js';
import type { DiffContext, StepReport } from './run-sequence.js';

export interface DiffSessionOptions {
  readonly kubeConfig: KubeConfig;
  readonly kubeconfigPath: string;
  /** Names the two namespaces and the CRD group (`<prefix>-kubectl-…`), so a reader can tell runs apart. */
  readonly prefix: string;
  readonly onStep?: (report: StepReport) => void;
}

/**
 * What every differential run needs before its first sequence: two fresh namespaces (kubectl applies
 * in one, our engine in the other), a Widget CRD of its own and a kubectl cache dir shared by every
 * kubectl process of the run. Used by the jest test, the replay script and the fuzzer alike, so all
 * three compare under the same conditions. Nothing is removed afterwards: writers leave finalizers.
 */
export async function openDiffSession(options: DiffSessionOptions): Promise<DiffContext> {
  const { kubeConfig, prefix } = options;
  const client = createKubeClient({ credentials: createKubeCredentials(kubeConfig) });
  const namespaceKubectl = uniqueName(`${prefix}-kubectl`);
  const namespaceEngine = uniqueName(`${prefix}-engine`);
  const [crd, kubectlCacheDir] = await Promise.all([
    installCrd(kubeConfig, uniqueName(prefix)),
    mkdtemp(join(tmpdir(), 'applyset-kubectl-cache-')),
    createNamespace(kubeConfig, namespaceKubectl),
    createNamespace(kubeConfig, namespaceEngine),
  ]);
  return {
    client,
    metaSource: createOpenApiPatchMetaSource({ client }),
    kubectl: process.env.DIFF_KUBECTL ?? 'kubectl',
    kubeconfigPath: options.kubeconfigPath,
    kubectlCacheDir,
    namespaceKubectl,
    namespaceEngine,
    crdGroup: crd.gvk.group,
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  };
}

import path from 'node:path';
import {
  applySetBody,
  getApplySet,
  kubectl,
  kubectlApply,
  repoRoot,
  waitFor,
  type ApplySetOptions,
  type Cluster,
} from './e2e-kit.js';

/**
 * Creates the ApplySet (with `options.decryptionSecret`) and waits until the server kept its
 * spec.decryption. The CRD is applied again while it has not: the cluster may be shared with test runs
 * that apply a CRD without the field, and the server drops a field its CRD does not declare.
 */
export async function createDecryptingApplySet(
  c: Cluster,
  namespace: string,
  name: string,
  options: ApplySetOptions,
): Promise<void> {
  await waitFor(`ApplySet ${namespace}/${name} keeps spec.decryption`, async () => {
    await kubectl(['apply', '-f', path.join(repoRoot, 'crds')]);
    await kubectlApply(JSON.stringify(applySetBody(namespace, name, options)));
    const view = (await getApplySet(c, namespace, name)) as { spec?: { decryption?: unknown } } | undefined;
    return view?.spec?.decryption === undefined ? undefined : true;
  });
}

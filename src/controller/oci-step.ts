/**
 * Step 9 for an `oci://` source (src/source/oci/oci-source.ts): the artifact its tag or digest names,
 * signature verified with the cosign keys of spec.source.verify's Secret (read as the account the set
 * is applied as, like every Secret the set names) and its layer extracted. Ends the run with an
 * outcome, or hands over the artifact; never throws but an abort.
 */
import type { ResolvedApplySetSpec } from '../api/applyset-types.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { Logger } from '../observability/create-logger.js';
import type { FetchedArtifact, OciSource } from '../source/oci/oci-source.js';
import type { CosignPublicKey } from '../source/oci/verify-cosign.js';
import { failureOutcome } from './failure-outcome.js';
import type { SourceAuth, Step } from './fetch-steps.js';
import { readSetSecret, stalledStep } from './secret-step.js';

/** The data keys of the verify Secret that hold cosign public keys (Flux's convention). */
const PUBLIC_KEY_SUFFIX = '.pub';

export async function fetchArtifact(
  ociSource: OciSource | undefined,
  spec: ResolvedApplySetSpec,
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  { auth, signal, log }: { auth: SourceAuth | undefined; signal: AbortSignal; log: Pick<Logger, 'error'> },
): Promise<Step<FetchedArtifact>> {
  const oci = spec.source.oci;
  if (ociSource === undefined || oci === undefined) {
    return stalledStep('SourceNotSupported', 'this controller reads no oci:// source; nothing was applied');
  }
  const keys =
    oci.verifySecretName === undefined ? undefined : await readKeys(who, oci.verifySecretName, signal);
  if (keys !== undefined && 'done' in keys) return keys;
  try {
    const artifact = await ociSource(
      {
        url: spec.source.url,
        ref: spec.source.ref,
        insecure: oci.insecure,
        credentialsFor: auth !== undefined && 'registry' in auth ? auth.registry : () => undefined,
        keys: keys?.value,
      },
      signal,
    );
    return { value: artifact };
  } catch (error) {
    return { done: failureOutcome(error, { step: 'fetch', spec }, log) };
  }
}

/** The cosign public keys of the verify Secret, read as the account. */
async function readKeys(
  who: { reader: KubeClient; user: string | undefined; namespace: string },
  name: string,
  signal: AbortSignal,
): Promise<Step<CosignPublicKey[]>> {
  const secret = await readSetSecret(who, name, 'spec.source.verify.secretRef', signal);
  if ('done' in secret) return secret;
  const keys = Object.entries(secret.value.data)
    .filter(([key]) => key.endsWith(PUBLIC_KEY_SUFFIX))
    .map(([key, pem]) => ({ name: key, pem }));
  if (keys.length === 0) {
    return stalledStep(
      'SecretNotFound',
      `Secret ${who.namespace}/${name} (spec.source.verify.secretRef) holds no cosign public key (no data key ending in ${PUBLIC_KEY_SUFFIX}); nothing was applied`,
    );
  }
  return { value: keys };
}

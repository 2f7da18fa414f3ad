/**
 * OCI artifacts as a source type (src/source/oci/oci-source.ts): the artifact spec.source.url's tag or
 * digest names, its signature verified with the cosign keys of spec.source.verify's Secret (read as
 * the account the set is applied as, like every Secret the set names), its layer extracted, and that
 * directory read as the revision's tree.
 */
import type { FoundSecret } from '../../kube/applyset-api.js';
import type { Step } from '../../api/reconcile-outcome.js';
import { failureOutcome } from '../../reconcile/failure-outcome.js';
import { directoryReader } from '../directory-reader.js';
import { readSetSecretKeys } from '../set-secret.js';
import { readSourceConnection, withSecretTls } from '../source-connection.js';
import type { SetAccount, SourceAdapter } from '../source-adapter.js';
import type { OciSource } from './oci-source.js';
import { pullSecretOf, type PullSecret } from './pull-secret.js';
import type { CosignPublicKey } from './verify-cosign.js';

/** The data keys of the verify Secret that hold cosign public keys (Flux's convention). */
const PUBLIC_KEY_SUFFIX = '.pub';

export function ociAdapter(ociSource: OciSource): SourceAdapter {
  return {
    read: async (request, signal) => {
      const { spec, log } = request;
      const oci = spec.source.oci;
      if (oci === undefined) throw new Error(`${spec.source.url} was resolved without its OCI settings`);
      const credentials = await request.credentials(pullSecretCredentialsOf);
      if ('done' in credentials) return credentials;
      const keys =
        oci.verifySecretName === undefined
          ? undefined
          : await readKeys(request.account, oci.verifySecretName, signal);
      if (keys !== undefined && 'done' in keys) return keys;
      const connection = await readSourceConnection(request, signal);
      if ('done' in connection) return connection;
      try {
        const artifact = await ociSource(
          {
            url: spec.source.url,
            ref: spec.source.ref,
            insecure: oci.insecure,
            credentialsFor: credentials.value?.credentialsFor ?? (() => undefined),
            keys: keys?.value,
            connection: withSecretTls(connection.value, credentials.value?.tls),
          },
          signal,
        );
        log.debug({ revision: artifact.revision }, 'artifact read');
        const { revision, digest, directory } = artifact;
        return { value: { revision, id: digest, tree: directoryReader(directory) } };
      } catch (error) {
        return { done: failureOutcome(error, { step: 'fetch', spec }, log) };
      }
    },
  };
}

function pullSecretCredentialsOf(
  secret: FoundSecret,
  from: string,
): { credentials: PullSecret } | { problem: string } {
  const read = pullSecretOf(secret.data, from);
  return 'problem' in read ? read : { credentials: read.pullSecret };
}

/** The cosign public keys of the verify Secret, read as the account. */
function readKeys(account: SetAccount, name: string, signal: AbortSignal): Promise<Step<CosignPublicKey[]>> {
  return readSetSecretKeys(
    account,
    { name, field: 'spec.source.verify.secretRef' },
    {
      suffix: PUBLIC_KEY_SUFFIX,
      read: (key, pem) => [{ name: key, pem }],
      lacking: `cosign public key (no data key ending in ${PUBLIC_KEY_SUFFIX})`,
    },
    signal,
  );
}

import { lenientApplySetSpec } from '../../api/resolve-applyset-spec.js';
import { registryHostKey, type RegistryPush } from '../../http/registry-event.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';
import { parseOciUrl } from '../../source/oci/oci-reference.js';
import { tagSatisfies } from '../../source/oci/select-semver-tag.js';

/** `sha256-<hex>.sig`: the tag cosign stores the signatures of manifest `sha256:<hex>` under. */
const COSIGN_SIGNATURE_TAG = /^sha256-[a-f0-9]{64}\.sig$/;

/**
 * The ApplySets registry pushes concern, as `namespace/name`: those whose spec.source.url is
 * `oci://<host>/<repository>` of a push (the host compared as registryHostKey writes it, so case and a
 * default port aside, against any host the event names) and whose ref is the pushed tag, or a semver
 * range the pushed tag satisfies (it may be the new highest). A set pinned to a digest is never
 * concerned (what a digest names never changes), nor a suspended one, nor a Git source. A set that
 * verifies signatures is also concerned by a cosign signature pushed to its repository: the
 * artifact's own push may have reached it before its signature, and been refused.
 */
export function registryPushTargets(
  applySets: readonly JsonObject[],
  pushes: readonly RegistryPush[],
): string[] {
  const keys = new Set<string>();
  for (const applySet of applySets) {
    const { suspend, url, ref } = lenientApplySetSpec(applySet['spec']);
    if (suspend || url === undefined || !url.startsWith('oci://')) continue;
    if (ref?.type !== 'tag' && ref?.type !== 'semver') continue;
    const oci = parseOciUrl(url);
    const host = 'problem' in oci ? undefined : registryHostKey(oci.host);
    if ('problem' in oci || host === undefined) continue;
    const verifies = isJsonObject(applySet['spec']) && verifiesSignatures(applySet['spec']['source']);
    const concerned = pushes.some(
      (push) =>
        push.repository === oci.repository &&
        push.hosts.includes(host) &&
        push.tag !== undefined &&
        ((ref.type === 'tag' ? push.tag === ref.name : tagSatisfies(push.tag, ref.range)) ||
          (verifies && COSIGN_SIGNATURE_TAG.test(push.tag))),
    );
    const metadata = isJsonObject(applySet['metadata']) ? applySet['metadata'] : {};
    if (concerned) keys.add(`${String(metadata['namespace'] ?? '')}/${String(metadata['name'] ?? '')}`);
  }
  return [...keys].sort();
}

function verifiesSignatures(source: unknown): boolean {
  return isJsonObject(source) && source['verify'] !== undefined && source['verify'] !== null;
}

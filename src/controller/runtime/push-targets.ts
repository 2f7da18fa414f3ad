import { repositoryIdentity, type PushEvent } from '../../http/push-event.js';
import { isJsonObject, type JsonObject } from '../../manifests/json-value.js';

/**
 * The ApplySets a push concerns, as `namespace/name`: those whose spec.source.url names the pushed
 * repository (by any of the URLs the payload gives; scheme, credentials and a `.git` suffix aside)
 * and whose ref is the pushed branch or tag. A set pinned to a commit is never concerned; a suspended
 * one is left alone.
 */
export function pushTargets(applySets: readonly JsonObject[], push: PushEvent): string[] {
  const pushed = new Set(push.repositoryUrls.map(repositoryIdentity).filter((id) => id !== undefined));
  const keys: string[] = [];
  for (const applySet of applySets) {
    const metadata = isJsonObject(applySet['metadata']) ? applySet['metadata'] : {};
    const spec = isJsonObject(applySet['spec']) ? applySet['spec'] : {};
    const source = isJsonObject(spec['source']) ? spec['source'] : {};
    const ref = isJsonObject(source['ref']) ? source['ref'] : {};
    if (spec['suspend'] === true || typeof source['url'] !== 'string') continue;
    const identity = repositoryIdentity(source['url']);
    if (identity === undefined || !pushed.has(identity)) continue;
    const matches =
      (push.branch !== undefined && ref['branch'] === push.branch) ||
      (push.tag !== undefined && ref['tag'] === push.tag);
    if (matches) keys.push(`${String(metadata['namespace'] ?? '')}/${String(metadata['name'] ?? '')}`);
  }
  return keys.sort();
}

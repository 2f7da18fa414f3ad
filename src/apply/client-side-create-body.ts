import { withMember } from '../inventory/member-metadata.js';
import type { MemberMetadata } from '../inventory/applyset-metadata.js';
import type { JsonObject } from '../manifests/json-value.js';
import type { ManifestObject } from '../manifests/manifest-object.js';
import { buildCreateBody, buildLastAppliedConfiguration } from '../merge/last-applied-configuration.js';

/**
 * The body of kubectl apply's create: the file with its last-applied annotation, and the set's
 * ownership marks. The marks go into the object but not into the annotation: that holds what the
 * file says, so `kubectl apply` of the same file agrees with us.
 */
export function clientSideCreateBody(object: ManifestObject, member: MemberMetadata): JsonObject {
  const { modified } = buildLastAppliedConfiguration(object.manifest);
  return buildCreateBody(withMember(modified, member));
}

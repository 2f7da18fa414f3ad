import { APPLYSET_GROUP, APPLYSET_PLURAL } from '../api/applyset-types.js';
import { isJsonObject, type JsonValue } from '../manifests/json-value.js';
import type { ReviewedUser } from './token-review.js';

export const SUBJECT_ACCESS_REVIEWS_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/**
 * The SubjectAccessReview asking whether `user` may `get` ApplySets in `namespace` (in every namespace
 * at once when it is empty, as the API's resourceAttributes mean it; only the one called `name` when
 * it is given, as RBAC's resourceNames grant it): the one right the
 * web view asks for before it shows a namespace's ApplySets, their objects and their events, as
 * `kubectl get applysets -n <namespace>` would need it. The user is named with everything the
 * TokenReview said (groups, uid, extra), so a group's RoleBinding counts as it does for kubectl.
 */
export function accessReviewBody(user: ReviewedUser, namespace: string, name?: string): string {
  const named = name === undefined ? {} : { name };
  return JSON.stringify({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      resourceAttributes: {
        namespace,
        ...named,
        verb: 'get',
        group: APPLYSET_GROUP,
        resource: APPLYSET_PLURAL,
      },
      user: user.username,
      groups: user.groups,
      ...(user.uid === undefined ? {} : { uid: user.uid }),
      ...(Object.keys(user.extra).length === 0 ? {} : { extra: user.extra }),
    },
  });
}

/** Allowed only when the answer says `allowed: true`; anything else is a no. */
export function readAccessReview(answer: JsonValue): boolean {
  return isJsonObject(answer) && isJsonObject(answer['status']) && answer['status']['allowed'] === true;
}

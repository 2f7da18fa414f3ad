import { isJsonObject, stringItems, type JsonObject, type JsonValue } from '../manifests/json-value.js';

/** Who a token belongs to, as the API server's TokenReview says: what a SubjectAccessReview needs. */
export interface ReviewedUser {
  readonly username: string;
  readonly uid: string | undefined;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type TokenReviewResult =
  | { readonly kind: 'user'; readonly user: ReviewedUser }
  | { readonly kind: 'unauthenticated' };

export const TOKEN_REVIEWS_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';

/** The TokenReview to create for `token`: no audiences, so the API server's own are checked. */
export function tokenReviewBody(token: string): string {
  return JSON.stringify({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  });
}

/**
 * The API server's answer to a TokenReview. Only `authenticated: true` with a user name is a user; an
 * answer of any other shape is no user either, never a guess.
 */
export function readTokenReview(answer: JsonValue): TokenReviewResult {
  const status = isJsonObject(answer) && isJsonObject(answer['status']) ? answer['status'] : {};
  const user = isJsonObject(status['user']) ? status['user'] : {};
  const username = user['username'];
  if (status['authenticated'] !== true || typeof username !== 'string' || username === '') {
    return { kind: 'unauthenticated' };
  }
  return {
    kind: 'user',
    user: {
      username,
      uid: typeof user['uid'] === 'string' && user['uid'] !== '' ? user['uid'] : undefined,
      groups: stringItems(user['groups']),
      extra: extraOf(user['extra']),
    },
  };
}

/**
 * The anonymous user, however the cluster lets it in: kube-apiserver names it `system:anonymous` in the
 * group `system:unauthenticated`. The web view shows nothing to it, even where RBAC grants it reads.
 */
export function isAnonymous(user: ReviewedUser): boolean {
  return user.username === 'system:anonymous' || user.groups.includes('system:unauthenticated');
}

function extraOf(value: JsonValue | undefined): Record<string, readonly string[]> {
  if (!isJsonObject(value)) return {};
  const extra: Record<string, readonly string[]> = {};
  for (const [key, values] of Object.entries(value as JsonObject)) extra[key] = stringItems(values);
  return extra;
}

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { IntentError } from '../errors/intent-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { accessReviewBody, readAccessReview, SUBJECT_ACCESS_REVIEWS_PATH } from './access-review.js';
import { bearerTokenOf } from './bearer-token.js';
import { ExpiringMemo } from './expiring-memo.js';
import {
  isAnonymous,
  readTokenReview,
  tokenReviewBody,
  TOKEN_REVIEWS_PATH,
  type TokenReviewResult,
} from './token-review.js';
import type { UiAccess, UiAccessDecision } from './ui-access.js';

/**
 * The API server could not answer a TokenReview or a SubjectAccessReview (down, overloaded, or the
 * controller lacks the right to create them). Nobody is let in on a guess: the view answers 503 and
 * the viewer tries again; it is retryable because the cluster, not the viewer, has to change.
 * @internal exported for the tests that check a failed review throws it (the server reads httpStatus)
 */
export class UiReviewUnavailableError extends IntentError {
  override readonly name = 'UiReviewUnavailableError';
  readonly code = 'UI_REVIEW_UNAVAILABLE';
  readonly intent = 'retryable';
  readonly reason = 'ReviewUnavailable';
  /** The HTTP status the web view answers with. */
  readonly httpStatus = 503;
  constructor(
    readonly review: 'TokenReview' | 'SubjectAccessReview',
    options: { cause: unknown },
  ) {
    // What the viewer reads: the cause (which may name the controller's account) goes to the log only.
    super(
      `the cluster could not check who you are or what you may see just now (${review}); try again`,
      options,
    );
  }
}

export interface ClusterUiAccessOptions {
  /**
   * The controller's own identity, unfenced: a review is a create, and every replica serves the view,
   * the leader or not. It needs `create` on tokenreviews and subjectaccessreviews, nothing more.
   */
  readonly client: KubeClient;
  /** How long a review's answer is kept: a revoked token or RoleBinding counts after at most this. */
  readonly ttlMs?: number;
  /** The viewers (tokens) whose reviews are kept; each namespace asked for by each adds one entry more. */
  readonly maxViewers?: number;
  readonly now?: () => number;
  /** Told when a review fails, with the API server's error as the cause: at most once per TTL. */
  readonly logger?: { warn(object: object, message: string): void };
}

const DEFAULT_TTL_MS = 10_000;
const DEFAULT_MAX_VIEWERS = 1_000;
/** Namespaces kept per viewer, on average, before the least recently asked go. */
const NAMESPACES_PER_VIEWER = 16;

const NO_TOKEN: UiAccessDecision = {
  kind: 'refused',
  status: 401,
  message: 'sign in with a Kubernetes bearer token (Authorization: Bearer, or the sign-in form)',
};
const NOT_AUTHENTICATED: UiAccessDecision = {
  kind: 'refused',
  status: 401,
  message: 'the cluster did not accept this token: it is wrong, expired or revoked',
};
const ANONYMOUS: UiAccessDecision = {
  kind: 'refused',
  status: 401,
  message: 'anonymous access is refused: sign in with a token of your own',
};

/**
 * The web view's access as the controller serves it in the cluster: a request's bearer token is
 * checked with a TokenReview, and its viewer sees a namespace only if a SubjectAccessReview says that
 * user may get ApplySets there, as RBAC decides for kubectl. Both answers are kept briefly under a
 * SHA-256 of the token (the token itself is never kept, logged or put in an error), so a page and its
 * live updates cost the API server a few reviews, not one per request. A review that fails throws
 * UiReviewUnavailableError: no answer is never a yes.
 */
export function clusterUiAccess(options: ClusterUiAccessOptions): UiAccess {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const maxViewers = options.maxViewers ?? DEFAULT_MAX_VIEWERS;
  const tokens = new ExpiringMemo<TokenReviewResult>(maxViewers, ttlMs, now);
  const access = new ExpiringMemo<boolean>(maxViewers * NAMESPACES_PER_VIEWER, ttlMs, now);
  let loggedAt = Number.NEGATIVE_INFINITY;
  const unavailable = (review: UiReviewUnavailableError['review'], cause: unknown) => {
    // An outage fails every request alike: one line per TTL says so without flooding the log.
    if (now() - loggedAt >= ttlMs) {
      loggedAt = now();
      options.logger?.warn({ review, err: cause }, 'web view: the API server did not answer a review');
    }
    return new UiReviewUnavailableError(review, { cause });
  };

  const review = (token: string, key: string) =>
    tokens.get(key, async () => {
      try {
        const answer = await options.client.request({
          method: 'POST',
          path: TOKEN_REVIEWS_PATH,
          body: tokenReviewBody(token),
        });
        return readTokenReview(answer);
      } catch (error) {
        throw unavailable('TokenReview', error);
      }
    });

  return async (request: IncomingMessage) => {
    const token = bearerTokenOf(request.headers);
    if (token === undefined) return NO_TOKEN;
    const key = createHash('sha256').update(token).digest('base64url');
    const reviewed = await review(token, key);
    if (reviewed.kind !== 'user') return NOT_AUTHENTICATED;
    if (isAnonymous(reviewed.user)) return ANONYMOUS;
    return {
      kind: 'viewer',
      viewer: {
        name: reviewed.user.username,
        // A viewer may outlive its request (a live stream): its token is checked again once its review
        // is older than the TTL, so an expired or revoked token stops showing anything within it.
        mayRead: async (namespace, name) => {
          const current = await review(token, key);
          if (current.kind !== 'user' || isAnonymous(current.user)) return false;
          const { user } = current;
          const mayGet = (scope: string, named?: string) =>
            access.get(`${key}/${scope}${named === undefined ? '' : `/${named}`}`, async () => {
              try {
                const answer = await options.client.request({
                  method: 'POST',
                  path: SUBJECT_ACCESS_REVIEWS_PATH,
                  body: accessReviewBody(user, scope, named),
                });
                return readAccessReview(answer);
              } catch (error) {
                throw unavailable('SubjectAccessReview', error);
              }
            });
          // One who may get ApplySets in every namespace (a ClusterRoleBinding) is answered by one
          // review, not one per namespace of a large fleet; the others are asked namespace by namespace,
          // and only one who may get neither is asked about the one ApplySet a page shows.
          return (
            namespace !== '' &&
            ((await mayGet('')) ||
              (await mayGet(namespace)) ||
              (name !== undefined && (await mayGet(namespace, name))))
          );
        },
      },
    };
  };
}

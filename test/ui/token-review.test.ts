import { accessReviewBody, readAccessReview } from '../../src/ui/access-review.js';
import { isAnonymous, readTokenReview, tokenReviewBody } from '../../src/ui/token-review.js';

describe('the TokenReview and SubjectAccessReview of the web view', () => {
  it('asks about the token with no audiences of its own', () => {
    expect(JSON.parse(tokenReviewBody('tok'))).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'tok' },
    });
  });

  it('reads an authenticated answer as the user with its groups, uid and extra', () => {
    const answer = {
      status: {
        authenticated: true,
        user: {
          username: 'system:serviceaccount:team-a:viewer',
          uid: 'u-1',
          groups: ['system:serviceaccounts', 'system:authenticated'],
          extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
        },
      },
    };
    expect(readTokenReview(answer)).toEqual({
      kind: 'user',
      user: {
        username: 'system:serviceaccount:team-a:viewer',
        uid: 'u-1',
        groups: ['system:serviceaccounts', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
      },
    });
  });

  it('reads anything but authenticated with a user name as no user', () => {
    expect(readTokenReview({ status: { authenticated: false, error: 'invalid bearer token' } })).toEqual({
      kind: 'unauthenticated',
    });
    expect(readTokenReview({ status: { authenticated: true, user: {} } }).kind).toBe('unauthenticated');
    expect(readTokenReview({ status: { authenticated: 'true', user: { username: 'x' } } }).kind).toBe(
      'unauthenticated',
    );
    expect(readTokenReview(null).kind).toBe('unauthenticated');
  });

  it('knows the anonymous user by its name or its group', () => {
    const user = { uid: undefined, extra: {} };
    expect(isAnonymous({ ...user, username: 'system:anonymous', groups: [] })).toBe(true);
    expect(isAnonymous({ ...user, username: 'x', groups: ['system:unauthenticated'] })).toBe(true);
    expect(isAnonymous({ ...user, username: 'x', groups: ['system:authenticated'] })).toBe(false);
  });

  it('asks whether the user, named as the TokenReview named it, may get ApplySets in the namespace', () => {
    const user = { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } };
    expect(JSON.parse(accessReviewBody(user, 'team-a'))).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: {
          namespace: 'team-a',
          verb: 'get',
          group: 'applyset.dev',
          resource: 'applysets',
        },
        user: 'alice',
        groups: ['devs'],
        uid: 'u-1',
        extra: { scopes: ['a'] },
      },
    });
    const bare = JSON.parse(accessReviewBody({ ...user, uid: undefined, extra: {} }, 'b')) as {
      spec: Record<string, unknown>;
    };
    expect(Object.keys(bare.spec).sort()).toEqual(['groups', 'resourceAttributes', 'user']);
  });

  it('reads only allowed: true as a yes', () => {
    expect(readAccessReview({ status: { allowed: true } })).toBe(true);
    expect(readAccessReview({ status: { allowed: false, denied: true } })).toBe(false);
    expect(readAccessReview({ status: {} })).toBe(false);
    expect(readAccessReview('allowed')).toBe(false);
  });
});

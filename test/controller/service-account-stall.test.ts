import {
  impersonationForbidden,
  refusedImpersonation,
  serviceAccountNotFound,
} from '../../src/reconcile/service-account-stall.js';
import { ApplySetInputRejectedError } from '../../src/apply/apply-set-input-error.js';
import { kubeApiErrorFrom } from '../../src/kube/kube-api-error.js';

/** A 403 as the API server answers it, through the client's own parsing of the Status. */
const forbidden = (message: string) =>
  kubeApiErrorFrom(
    'GET',
    '/api/v1/namespaces/team-a/configmaps/x',
    403,
    JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Forbidden', message, code: 403 }),
  );

describe('the stalls of an ApplySet whose account cannot be used', () => {
  it('says, on one line, what to create when the default account is missing', () => {
    const outcome = serviceAccountNotFound('team-a', 'applyset-deployer', 'default');
    expect(outcome).toEqual({
      kind: 'stalled',
      reason: 'ServiceAccountNotFound',
      message:
        'ServiceAccount team-a/applyset-deployer does not exist; nothing was applied. Create it and grant it what the set holds: ' +
        'kubectl -n team-a create serviceaccount applyset-deployer && kubectl -n team-a create rolebinding applyset-deployer ' +
        '--clusterrole=edit --serviceaccount=team-a:applyset-deployer (see docs/multi-tenancy.md)',
    });
    expect(outcome.kind === 'stalled' && outcome.message.includes('\n')).toBe(false);
  });

  it('names spec.serviceAccountName when the account the spec names is missing', () => {
    const outcome = serviceAccountNotFound('team-a', 'ops', 'spec.serviceAccountName');
    expect(outcome.kind === 'stalled' && outcome.message).toMatch(
      /^ServiceAccount team-a\/ops \(spec\.serviceAccountName\) does not exist; nothing was applied\. .*create serviceaccount ops && /,
    );
  });

  it("recognises the API server's refusal of an impersonation, and no other 403, wherever it was wrapped", () => {
    const refusal = forbidden(
      'serviceaccounts "ops" is forbidden: User "system:serviceaccount:rel:ctl" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"',
    );
    const other = forbidden(
      'configmaps "x" is forbidden: User "system:serviceaccount:team-a:applyset-deployer" cannot create resource "configmaps" in API group "" in the namespace "kube-system"',
    );
    const stalled = impersonationForbidden('team-a', 'ops', 'main@sha1:abc');
    const judge = (thrown: unknown) => refusedImpersonation({ thrown }, 'team-a', 'ops', 'main@sha1:abc');
    expect(judge(refusal)).toEqual(stalled);
    expect(judge(new ApplySetInputRejectedError(['x'], { cause: refusal }))).toEqual(stalled);
    expect(judge(other)).toBeUndefined();
    const failed = (cause: unknown) => ({
      result: {
        outcomes: [
          {
            action: 'failed' as const,
            ref: { group: '', kind: 'ConfigMap', namespace: 'team-a', name: 'x' },
            message: 'm',
            cause,
          },
        ],
        parentUid: 'uid-1',
        completed: false,
      },
    });
    expect(refusedImpersonation(failed(refusal), 'team-a', 'ops', 'main@sha1:abc')).toEqual(stalled);
    expect(refusedImpersonation(failed(other), 'team-a', 'ops', 'main@sha1:abc')).toBeUndefined();
  });

  it('stalls an impersonation refused, naming the account and the chart value', () => {
    expect(impersonationForbidden('team-a', 'ops', 'main@sha1:abc')).toEqual({
      kind: 'stalled',
      reason: 'ImpersonationForbidden',
      message:
        'the controller may not impersonate ServiceAccount team-a/ops; nothing was applied. Name an account the controller may use (chart value tenancy.serviceAccountNames, see docs/multi-tenancy.md)',
      revision: 'main@sha1:abc',
    });
  });
});

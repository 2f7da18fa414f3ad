import {
  impersonationForbidden,
  isImpersonationRefusal,
  serviceAccountNotFound,
} from '../../src/controller/service-account-stall.js';

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

  it("recognises the API server's refusal of an impersonation, and no other 403", () => {
    expect(
      isImpersonationRefusal(
        'serviceaccounts "ops" is forbidden: User "system:serviceaccount:rel:ctl" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"',
      ),
    ).toBe(true);
    expect(
      isImpersonationRefusal(
        'configmaps "x" is forbidden: User "system:serviceaccount:team-a:applyset-deployer" cannot create resource "configmaps" in API group "" in the namespace "kube-system"',
      ),
    ).toBe(false);
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

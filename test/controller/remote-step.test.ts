import type { ReconcileOutcome } from '../../src/api/reconcile-outcome.js';
import { remoteEngineOutcome } from '../../src/controller/remote-step.js';
import { impersonationForbidden } from '../../src/reconcile/service-account-stall.js';

describe('remoteEngineOutcome', () => {
  const server = 'https://cluster-b.example:6443';
  const who = { namespace: 'team-a', serviceAccount: 'deployer' };

  it("names the kubeconfig's identity on the remote cluster when the impersonation is refused there", () => {
    const { outcome } = remoteEngineOutcome(
      { outcome: impersonationForbidden('team-a', 'deployer', 'main@sha1:1') },
      server,
      who,
    );
    expect(outcome).toEqual({
      kind: 'stalled',
      reason: 'ImpersonationForbidden',
      revision: 'main@sha1:1',
      message:
        "the kubeconfig's identity may not impersonate ServiceAccount team-a/deployer on remote cluster https://cluster-b.example:6443; nothing was applied. Grant it impersonate on that user there (docs/remote-clusters.md)",
    });
  });

  it('leaves every other outcome as it is', () => {
    const failed: ReconcileOutcome = { kind: 'stalled', reason: 'ApplyFailed', message: 'forbidden' };
    const run = { outcome: failed, steady: true };
    expect(remoteEngineOutcome(run, server, who)).toBe(run);
  });
});

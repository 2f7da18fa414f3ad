import {
  TenancyFlagError,
  tenancyFlags,
  type TenancyFlagValues,
} from '../../src/cli/controller-tenancy-flags.js';

// Issue #23: the controller's defaults are the multi-tenant lockdown; --apply-as-controller is the one
// opt-out, and flags that contradict each other are refused before anything starts.

const flags = (given: Partial<TenancyFlagValues> = {}): TenancyFlagValues => ({
  'apply-as-controller': false,
  'require-secret-source-hosts': false,
  'no-cross-namespace-refs': false,
  'allow-cross-namespace-refs': false,
  'allow-secret-refs-from': '',
  ...given,
});

describe('the tenancy flags of applyset controller', () => {
  it('default to applyset-deployer, Secrets that must name their hosts, and no cross-namespace reference', () => {
    expect(tenancyFlags(flags())).toEqual({
      defaultServiceAccountName: 'applyset-deployer',
      requireSecretSourceHosts: true,
      noCrossNamespaceRefs: true,
      allowSecretRefsFrom: [],
    });
  });

  it('rename the default account with --default-service-account', () => {
    expect(tenancyFlags(flags({ 'default-service-account': 'deployer' }))).toMatchObject({
      defaultServiceAccountName: 'deployer',
      requireSecretSourceHosts: true,
    });
  });

  it('apply as the controller and accept Secrets without hosts under --apply-as-controller, cross-namespace references still refused', () => {
    const config = tenancyFlags(flags({ 'apply-as-controller': true }));
    expect(config).toEqual({
      requireSecretSourceHosts: false,
      noCrossNamespaceRefs: true,
      allowSecretRefsFrom: [],
    });
    expect('defaultServiceAccountName' in config).toBe(false);
  });

  it('keep refusing Secrets without hosts under --apply-as-controller with --require-secret-source-hosts', () => {
    const config = tenancyFlags(flags({ 'apply-as-controller': true, 'require-secret-source-hosts': true }));
    expect(config.requireSecretSourceHosts).toBe(true);
  });

  it('accept the old --no-cross-namespace-refs and --require-secret-source-hosts as the defaults they now are', () => {
    expect(
      tenancyFlags(flags({ 'no-cross-namespace-refs': true, 'require-secret-source-hosts': true })),
    ).toEqual(tenancyFlags(flags()));
  });

  it('open references to other namespaces only with --allow-cross-namespace-refs', () => {
    expect(
      tenancyFlags(flags({ 'allow-cross-namespace-refs': true, 'allow-secret-refs-from': 'shared, creds' })),
    ).toMatchObject({ noCrossNamespaceRefs: false, allowSecretRefsFrom: ['shared', 'creds'] });
  });

  it.each([
    [
      { 'apply-as-controller': true, 'default-service-account': 'deployer' },
      '--apply-as-controller applies ApplySets without spec.serviceAccountName as the controller, --default-service-account as a ServiceAccount of their namespace: give one of them',
    ],
    [
      { 'allow-secret-refs-from': 'shared' },
      '--allow-secret-refs-from names namespaces to read Secrets from, but references to another namespace are refused by default: add --allow-cross-namespace-refs',
    ],
    [
      { 'allow-cross-namespace-refs': true, 'no-cross-namespace-refs': true },
      '--no-cross-namespace-refs (the default) contradicts --allow-cross-namespace-refs: give one of them',
    ],
    [
      { 'default-service-account': 'system:serviceaccount:kube-system:admin' },
      '--default-service-account must be a ServiceAccount name (a DNS-1123 subdomain), got "system:serviceaccount:kube-system:admin"',
    ],
  ])('refuse %j', (given, message) => {
    expect(() => tenancyFlags(flags(given))).toThrow(new TenancyFlagError(message));
  });
});

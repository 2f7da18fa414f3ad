import {
  parseRemoteKubeConfig,
  RemoteKubeConfigRefusedError,
  type RemoteKubeConfigPolicy,
} from '../../src/controller/remote-kube-config.js';

const FROM = 'Secret team-a/cluster-b, key value';
const LOCKED: RemoteKubeConfigPolicy = { allowExec: false, allowFiles: false, allowedHosts: [] };

/** A one-context kubeconfig whose cluster and user carry the given fields. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'b', cluster: { server: 'https://cluster-b.example:6443', ...cluster } }],
    users: [{ name: 'deployer', user }],
    contexts: [{ name: 'b', context: { cluster: 'b', user: 'deployer' } }],
    'current-context': 'b',
  });
}

function refusal(text: string, policy: RemoteKubeConfigPolicy = LOCKED): string {
  try {
    parseRemoteKubeConfig(text, FROM, policy);
  } catch (error) {
    expect(error).toBeInstanceOf(RemoteKubeConfigRefusedError);
    expect((error as RemoteKubeConfigRefusedError).reason).toBe('KubeConfigRefused');
    expect((error as RemoteKubeConfigRefusedError).intent).toBe('stalled');
    return (error as Error).message;
  }
  throw new Error('the kubeconfig was accepted');
}

describe('parseRemoteKubeConfig', () => {
  it('accepts inline certificates and a token, naming the Secret as the source', () => {
    const config = parseRemoteKubeConfig(
      kubeconfig(
        { 'certificate-authority-data': 'Q0E=' },
        { token: 't0ken', 'client-certificate-data': 'Yw==', 'client-key-data': 'aw==' },
      ),
      FROM,
      LOCKED,
    );
    expect(config.clusters[0]).toMatchObject({
      server: 'https://cluster-b.example:6443',
      caData: 'Q0E=',
      source: FROM,
    });
    expect(config.users[0]).toMatchObject({ token: 't0ken', source: FROM });
  });

  it('refuses proxy-url and every impersonation field with KubeConfigRefused, naming each field', () => {
    expect(refusal(kubeconfig({ 'proxy-url': 'http://proxy.example:3128' }, { token: 't' }))).toBe(
      `the kubeconfig of ${FROM} is refused: cluster "b" sets proxy-url: a remote cluster is reached without a proxy`,
    );
    expect(refusal(kubeconfig({}, { token: 't', as: 'system:admin', 'as-groups': ['system:masters'] }))).toBe(
      `the kubeconfig of ${FROM} is refused: user "deployer" sets as, as-groups: the controller impersonates the ApplySet's account itself, so a kubeconfig may not impersonate`,
    );
    // No flag re-admits them.
    const open: RemoteKubeConfigPolicy = { allowExec: true, allowFiles: true, allowedHosts: [] };
    expect(refusal(kubeconfig({ 'proxy-url': 'http://p:1' }, { 'as-uid': '1' }), open)).toContain(
      'proxy-url: a remote cluster is reached without a proxy; user "deployer" sets as-uid:',
    );
  });

  it('refuses an exec plugin, naming the command and the flag that allows it', () => {
    const text = kubeconfig({}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'curl' } });
    expect(refusal(text)).toBe(
      `the kubeconfig of ${FROM} is refused: user "deployer" has an exec plugin (curl): plugins are refused unless the controller runs with --allow-remote-kubeconfig-exec`,
    );
    expect(parseRemoteKubeConfig(text, FROM, { ...LOCKED, allowExec: true }).users[0]?.exec?.command).toBe(
      'curl',
    );
  });

  it('refuses an auth-provider plugin', () => {
    expect(refusal(kubeconfig({}, { 'auth-provider': { name: 'oidc' } }))).toContain(
      'user "deployer" has an auth-provider: plugins are refused unless the controller runs with --allow-remote-kubeconfig-exec',
    );
  });

  it('refuses every local file reference at once, whatever the path', () => {
    const text = kubeconfig(
      { 'certificate-authority': '/etc/ssl/ca.pem' },
      {
        'client-certificate': 'cert.pem',
        'client-key': '../key.pem',
        tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      },
    );
    const message = refusal(text);
    for (const field of ['certificate-authority', 'client-certificate', 'client-key', 'tokenFile']) {
      expect(message).toContain(`names a local file in ${field} (use `);
    }
    expect(message).toContain('--allow-remote-kubeconfig-files');
    expect(() => parseRemoteKubeConfig(text, FROM, { ...LOCKED, allowFiles: true })).not.toThrow();
  });

  it.each([
    ['http://169.254.169.254/', '169.254.169.254 is a link-local (cloud metadata) address'],
    ['https://metadata.google.internal', 'metadata.google.internal is a cloud metadata host name'],
    [
      'https://127.0.0.1:6443',
      '127.0.0.1 is a loopback address (--allowed-remote-cluster-hosts may name it)',
    ],
    [
      'https://localhost:6443',
      'localhost is a loopback host name (--allowed-remote-cluster-hosts may name it)',
    ],
    ['file:///etc/passwd', 'unsupported scheme file: (use https or http)'],
  ])('refuses the server %s', (server, reason) => {
    expect(refusal(kubeconfig({ server }, { token: 't' }))).toBe(
      `the kubeconfig of ${FROM} is refused: server ${server}: ${reason}`,
    );
  });

  it('takes a loopback server the operator names, and only the hosts named when there is a list', () => {
    const policy = { ...LOCKED, allowedHosts: ['127.0.0.1'] };
    expect(() =>
      parseRemoteKubeConfig(kubeconfig({ server: 'https://127.0.0.1:6443' }, {}), FROM, policy),
    ).not.toThrow();
    expect(refusal(kubeconfig({}, {}), policy)).toContain(
      'cluster-b.example:6443 is not among the allowed remote cluster hosts (127.0.0.1)',
    );
  });

  it('refuses a kubeconfig without a usable current context, and text that is not one', () => {
    expect(refusal(JSON.stringify({ clusters: [] }))).toContain('it sets no current-context');
    expect(refusal('current-context: nowhere')).toContain('current-context "nowhere" is not defined');
    expect(refusal('- a list')).toContain(`${FROM} is not a kubeconfig: the file is not a YAML mapping`);
  });
});

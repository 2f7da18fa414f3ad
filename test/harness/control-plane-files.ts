import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ControlPlaneError } from './control-plane-error.js';

// What the local control plane is started from: its binaries, its serving certificate, its admin
// kubeconfig and its audit policy.

const execFileAsync = promisify(execFile);
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** The file in the control plane's directory (beside admin.kubeconfig) where audited requests go. */
export const AUDIT_LOG_FILE = 'audit.log';

/** The one user whose requests the API server records (a client certificate's common name). */
export const AUDITED_USER = 'applyset-audited';

/** Metadata of AUDITED_USER's requests once answered; nothing of anyone else's. */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
    users: [${AUDITED_USER}]
  - level: None
`;

/** Builds the binaries (a no-op on a warm cache) and returns their directory. */
export async function ensureControlPlaneBinaries(log: (line: string) => void = () => {}): Promise<string> {
  log('control plane: checking the binary cache (a cold build takes a while)');
  try {
    const { stdout } = await execFileAsync('bash', [join(repoRoot, 'scripts/build-control-plane.sh')], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const lines = stdout.trim().split('\n');
    const binDir = lines[lines.length - 1];
    if (binDir === undefined || binDir === '')
      throw new ControlPlaneError('the build script printed no directory');
    return binDir;
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr ?? String(error);
    throw new ControlPlaneError(`could not build the local control plane:\n${detail}`, { cause: error });
  }
}

export async function makeServingCertificate(
  dir: string,
  address: string,
): Promise<{ cert: string; key: string }> {
  const cert = join(dir, 'serving.crt');
  const key = join(dir, 'serving.key');
  // A self-signed certificate that is its own CA, valid for the loopback names kubectl and tests use,
  // and for the `kubernetes` Service's address (10.96.0.1), which pods of the node profile dial.
  await execFileAsync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '30',
    '-subj',
    '/CN=applyset-test-apiserver',
    '-addext',
    `subjectAltName=IP:${address},IP:10.96.0.1,DNS:localhost,DNS:kubernetes.default.svc`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { cert, key };
}

export function kubeconfigYaml(server: string, caData: string, user: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: applyset-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${Buffer.from(caData).toString('base64')}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    `- name: ${user}@applyset-test`,
    '  context:',
    '    cluster: applyset-test',
    `    user: ${user}`,
    `current-context: ${user}@applyset-test`,
    '',
  ].join('\n');
}

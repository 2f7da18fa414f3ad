/**
 * The controller's clients share the one credentials object its composition root made: the
 * controller's own client, the Lease's unfenced client and the engines' connection run an exec
 * plugin once between them (its token has no expiry), against the real API server.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { controllerClients } from '../../../src/controller/runtime/controller-clients.js';
import { createKubeCredentials } from '../../../src/kube/kube-credentials.js';
import { currentClusterOf, currentUserOf } from '../../../src/kube/kubeconfig-model.js';
import { loadKubeConfig } from '../../../src/kube/load-kube-config.js';
import { createLogger } from '../../../src/observability/create-logger.js';
import { configMapYaml, requestFor, writeSetDirectory } from '../../apply/apply-test-kit.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  createNamespace,
  uniqueName,
} from '../../harness/test-cluster.js';

const namespace = uniqueName('controller-clients');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-controller-clients-'));
  await createNamespace(adminKubeConfig(), namespace);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A kubeconfig of the test cluster whose user's exec plugin prints the admin token and logs each run. */
async function execKubeconfig(log: string): Promise<string> {
  const admin = loadKubeConfig({}, adminKubeconfigPath()).kubeConfig;
  const cluster = currentClusterOf(admin);
  const token = currentUserOf(admin)?.token;
  if (cluster?.caData === undefined || token === undefined)
    throw new Error('admin kubeconfig: no CA or token');
  const script = [
    `require('node:fs').appendFileSync(${JSON.stringify(log)}, 'run\\n');`,
    `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',`,
    `status: { token: ${JSON.stringify(token)} } }));`,
  ].join(' ');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'c', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } },
    ],
    users: [
      {
        name: 'u',
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: process.execPath,
            args: ['-e', script],
          },
        },
      },
    ],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace } }],
    'current-context': 'x',
  };
  const path = join(dir, 'config');
  await writeFile(path, dump(config));
  return path;
}

describe("the controller's clients", () => {
  it('run the exec plugin once for the controller, the Lease and the engines', async () => {
    const log = join(dir, 'runs.log');
    const credentials = createKubeCredentials(loadKubeConfig({}, await execKubeconfig(log)).kubeConfig);
    const clients = controllerClients({
      config: { credentials, leaderElect: false },
      logger: createLogger({ level: 'silent' }),
      countRequest: () => undefined,
      leadership: {},
    });

    await clients.client.request({ method: 'GET', path: `/api/v1/namespaces/${namespace}` });
    await clients.unfenced().request({
      method: 'GET',
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    });
    const set = await writeSetDirectory({ 'cm.yaml': configMapYaml(namespace, 'child', { a: '1' }) });
    const result = await clients.engineFor(undefined)(await requestFor(set, { namespace, name: 'set' }));

    expect(result.completed).toBe(true);
    expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
  });
});

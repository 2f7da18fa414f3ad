// `npm run demo`: the whole loop on one machine. Starts the local control plane (or uses KUBECONFIG),
// serves examples/ as a Git repository over local HTTP, installs the CRD, runs the controller in this
// process, creates the guestbook ApplySet and waits until it is Ready; then pushes a commit that edits
// one manifest and removes another, and shows the update and the prune. The controller runs with its
// defaults, so the demo first creates the account it applies the ApplySet as (and says so). Everything started here is
// stopped in `finally`, also on Ctrl-C.
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_DEPLOYER_ACCOUNT } from '../src/api/applyset-account.js';
import type { RunningController } from '../src/controller/runtime/controller-config.js';
import { parseSourceHostList } from '../src/net/host-list.js';
import { runController } from '../src/controller/runtime/run-controller.js';
import { createKubeCredentials } from '../src/kube/kube-credentials.js';
import { loadKubeConfig } from '../src/kube/load-kube-config.js';
import { createLogger } from '../src/observability/create-logger.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { readFileTree, startGitServer, type GitTestServer } from '../test/harness/git-server.js';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NAMESPACE = 'default';
const NAME = 'guestbook';
const CHILDREN_NAMESPACE = 'applyset-demo';
const DEPLOYER = DEFAULT_DEPLOYER_ACCOUNT;
const DEPLOYER_ROLE = 'applyset-demo-deployer';

const interrupted = new AbortController();
const step = (text: string) => console.log(`\n\x1b[1m==> ${text}\x1b[0m`);

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.log(`\n${signal}: cleaning up`);
      interrupted.abort(new Error(`interrupted by ${signal}`));
    });
  }
  let controlPlane: ControlPlane | undefined;
  let git: GitTestServer | undefined;
  let controller: RunningController | undefined;
  let workDir: string | undefined;
  let kubeconfig = process.env['KUBECONFIG'];
  const ownCluster = kubeconfig === undefined || kubeconfig === '';
  try {
    workDir = await mkdtemp(path.join(tmpdir(), 'applyset-demo-'));
    if (ownCluster) {
      step('Starting a local control plane (etcd, kube-apiserver, kube-controller-manager)');
      controlPlane = await startControlPlane({
        ownerPid: process.pid,
        log: (line) => console.log(`   ${line}`),
      });
      kubeconfig = controlPlane.kubeconfigPath;
    } else {
      step(`Using the cluster of KUBECONFIG=${kubeconfig}`);
    }
    const kubectl = async (...args: string[]) => {
      const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfig!, ...args], {
        signal: interrupted.signal,
      });
      return stdout;
    };
    const show = async (...args: string[]) => {
      console.log(`$ kubectl ${args.join(' ')}`);
      process.stdout.write(await kubectl(...args));
    };

    step('Serving examples/ as a Git repository over local HTTP');
    git = await startGitServer({ files: await readFileTree(path.join(root, 'examples')) });
    console.log(`   ${git.url} (branch main, path guestbook) at ${await git.revParse('main')}`);

    step('Installing the ApplySet CRD');
    await kubectl('apply', '-f', path.join(root, 'crds'));
    await kubectl('wait', '--for', 'condition=Established', '--timeout', '60s', 'crd/applysets.applyset.dev');

    step(`Creating ServiceAccount ${NAMESPACE}/${DEPLOYER}, which the controller applies the ApplySet as`);
    await kubectl('apply', '-f', await writeJson(workDir, 'deployer.json', deployerObjects()));
    console.log(
      `   The controller holds no rights on what an ApplySet holds: it acts as ${DEPLOYER} of the ApplySet's\n` +
        `   namespace. Created it, bound to ClusterRole ${DEPLOYER_ROLE} (Namespaces, ConfigMaps, Services and\n` +
        `   Deployments: what examples/guestbook holds; list on everything, to prune the Namespace). It\n` +
        `   needs nothing on the ApplySet itself: the controller writes the inventory. See docs/multi-tenancy.md.`,
    );

    step('Starting the controller (logs in a file)');
    const logFile = path.join(workDir, 'controller.log');
    const logStream = createWriteStream(logFile);
    controller = await runController(
      {
        credentials: createKubeCredentials(loadKubeConfig(process.env, kubeconfig).kubeConfig),
        concurrency: 2,
        metricsAddress: '127.0.0.1:0',
        leaderElect: false,
        namespace: NAMESPACE,
        gitCacheDir: path.join(workDir, 'git-cache'),
        identity: `demo-${process.pid}`,
        leaseNamespace: NAMESPACE,
        leaseName: 'applyset-controller-leader',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        shutdownGraceMs: 10_000,
        // The defaults of `applyset controller` (issue #23); the Git server of the demo is on loopback.
        defaultServiceAccountName: DEPLOYER,
        requireSecretSourceHosts: true,
        noCrossNamespaceRefs: true,
        allowedSourceHosts: parseSourceHostList('127.0.0.1'),
      },
      createLogger({ level: 'info', destination: logStream }),
    );
    console.log(`   logs: ${logFile}; metrics: http://127.0.0.1:${controller.port}/metrics`);

    step(`Creating the ApplySet ${NAMESPACE}/${NAME}`);
    const manifest = {
      apiVersion: 'applyset.dev/v1alpha1',
      kind: 'ApplySet',
      metadata: { name: NAME, namespace: NAMESPACE },
      spec: {
        source: { url: git.url, ref: { branch: 'main' }, path: 'guestbook' },
        interval: '30s',
        prune: true,
        deletionPolicy: 'Delete',
      },
    };
    console.log(JSON.stringify(manifest.spec, null, 2).replace(/^/gm, '   '));
    await kubectl('apply', '-f', await writeJson(workDir, 'applyset.json', manifest));
    const first = `main@sha1:${await git.revParse('main')}`;
    await waitForRevision(kubectl, first);
    await show('get', 'applysets', '-n', NAMESPACE);
    await show('get', 'deployments,services,configmaps', '-n', CHILDREN_NAMESPACE);

    step('Committing a change: edit guestbook/config.yaml, remove guestbook/legacy-config.yaml');
    await git.writeFiles(
      {
        'guestbook/config.yaml': [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          '  name: guestbook-config',
          `  namespace: ${CHILDREN_NAMESPACE}`,
          'data:',
          '  GREETING: Hello again, from the second commit',
          '  BACKGROUND: lightblue',
          '',
        ].join('\n'),
      },
      { message: 'New greeting' },
    );
    const second = `main@sha1:${await git.deleteFiles(['guestbook/legacy-config.yaml'], { message: 'Drop the legacy config' })}`;
    // The controller would see it within the interval; the annotation asks for it now.
    await kubectl(
      'annotate',
      '--overwrite',
      '-n',
      NAMESPACE,
      `applyset/${NAME}`,
      `applyset.dev/reconcile-requested-at=${new Date().toISOString()}`,
    );
    await waitForRevision(kubectl, second);
    await show('get', 'applysets', '-n', NAMESPACE);
    await show('get', 'configmaps', '-n', CHILDREN_NAMESPACE);
    await show(
      'get',
      'configmap',
      'guestbook-config',
      '-n',
      CHILDREN_NAMESPACE,
      '-o',
      'jsonpath={.data}{"\\n"}',
    );
    await show('get', 'events', '-n', NAMESPACE, '--field-selector', `involvedObject.name=${NAME}`);

    if (!ownCluster) {
      step('Deleting the ApplySet (deletionPolicy Delete prunes its objects)');
      await kubectl('delete', '-n', NAMESPACE, `applyset/${NAME}`, '--wait=true', '--timeout=60s');
      await kubectl('delete', '--ignore-not-found', '-f', path.join(workDir, 'deployer.json'));
    }
    step('Done');
  } finally {
    await controller?.stop();
    await git?.close();
    await controlPlane?.stop();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  }
}

/** Writes `body` as JSON into `dir`; returns the path, for `kubectl apply -f`. */
async function writeJson(dir: string, name: string, body: unknown): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(body));
  return file;
}

/** The account the guestbook is applied as, with the rights its objects need and no more. */
function deployerObjects() {
  const subjects = [{ kind: 'ServiceAccount', name: DEPLOYER, namespace: NAMESPACE }];
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  const bind = (kind: 'ClusterRole' | 'Role', name: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: `${kind}Binding`,
    metadata: { name, ...(kind === 'Role' ? { namespace: NAMESPACE } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
    subjects,
  });
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEPLOYER, namespace: NAMESPACE } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: DEPLOYER_ROLE },
        rules: [
          { apiGroups: [''], resources: ['namespaces', 'configmaps', 'services'], verbs },
          { apiGroups: ['apps'], resources: ['deployments'], verbs },
          // Pruning the Namespace (the ApplySet deleted) first lists everything it holds, to never delete
          // what another owner put there.
          { apiGroups: ['*'], resources: ['*'], verbs: ['list'] },
        ],
      },
      // The account needs nothing on the ApplySet: the controller writes the inventory as itself.
      bind('ClusterRole', DEPLOYER_ROLE),
    ],
  };
}

async function waitForRevision(
  kubectl: (...args: string[]) => Promise<string>,
  revision: string,
): Promise<void> {
  console.log(`   waiting until ${revision} is applied and Ready`);
  const deadline = Date.now() + 90_000;
  for (;;) {
    interrupted.signal.throwIfAborted();
    const out = await kubectl('get', '-n', NAMESPACE, `applyset/${NAME}`, '-o', 'json');
    const status = (
      JSON.parse(out) as {
        status?: {
          lastAppliedRevision?: string;
          conditions?: { type: string; status: string; message: string }[];
        };
      }
    ).status;
    const ready = status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True' && status?.lastAppliedRevision === revision) return;
    if (Date.now() > deadline)
      throw new Error(`not Ready at ${revision} after 90 s: ${ready?.message ?? 'no status yet'}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(interrupted.signal.aborted ? 130 : 1);
  },
);

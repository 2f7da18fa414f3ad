import { type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiGet, freePort, httpOk } from './api-get.js';
import { ControlPlaneError } from './control-plane-error.js';
import {
  AUDIT_LOG_FILE,
  AUDIT_POLICY,
  ensureControlPlaneBinaries,
  kubeconfigYaml,
  makeServingCertificate,
} from './control-plane-files.js';
import { isAlive, startProcess, stopProcesses, stopProgram, tail, waitForProcess } from './start-process.js';

/** Everything a test or a person needs to reach a running local control plane. */
export interface ControlPlaneInfo {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly adminToken: string;
  readonly caPath: string;
  readonly workDir: string;
  /** The processes we started, so another process (`cluster:down`) can stop them. */
  readonly pids: readonly number[];
}

export interface ControlPlane extends ControlPlaneInfo {
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver (SIGTERM, SIGKILL after 5 s: it drains its watches far longer), leaves it
   * down `downMs`, then starts it again with the same arguments, port and etcd, and waits until it is
   * ready: an API server restart as the controller sees it. etcd and the controller manager run on.
   */
  restartApiServer(downMs: number): Promise<void>;
}

export interface StartOptions {
  /** Where the binaries live; built (or found in the cache) by scripts/build-control-plane.sh if absent. */
  readonly binDir?: string;
  /**
   * When set, each process also watches this pid and exits when it dies, so a test run that is killed
   * with SIGKILL leaves nothing running. `cluster:up` passes none: its processes outlive the command.
   */
  readonly ownerPid?: number;
  /** Reports progress lines (which binary started, what we wait for). */
  readonly log?: (line: string) => void;
  readonly readyTimeoutMs?: number;
  /**
   * The node profile (test/harness/node-cluster.ts): the API server listens on this address of an
   * interface the harness created, so that a node's pods can reach it, instead of 127.0.0.1.
   */
  readonly apiAddress?: string;
  /** The node profile's controller list (the workload controllers on); the default keeps them off. */
  readonly controllers?: string;
  /** The API server's /debug/pprof on (the bench, to see where the server's CPU goes); off by default. */
  readonly profiling?: boolean;
}

/** How many times a start is tried when a port it was given was taken before it could listen. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * Starts etcd, kube-apiserver (RBAC, service-account tokens, OpenAPI v2 and v3) and
 * kube-controller-manager (garbage collector, namespace, service-account and ClusterRole aggregation
 * controllers) on loopback. The ports are found free and then listened on by the processes: another
 * process on the machine (an outgoing connection's ephemeral port) may take one in between, and etcd
 * then exits with "address already in use". Such a start is stopped and made again on new ports; any
 * other failure is thrown at once.
 */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startControlPlaneOnce(options);
    } catch (error) {
      const portTaken = error instanceof Error && error.message.includes('address already in use');
      if (!portTaken || attempt >= PORT_RACE_ATTEMPTS) throw error;
      options.log?.(`control plane: a port was taken before it was listened on; starting again (${attempt})`);
    }
  }
}

async function startControlPlaneOnce(options: StartOptions): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const binDir = options.binDir ?? (await ensureControlPlaneBinaries(log));
  const readyTimeoutMs = options.readyTimeoutMs ?? 90_000;
  const workDir = await mkdtemp(join(tmpdir(), 'applyset-cp-'));
  const children: ChildProcess[] = [];
  const exits = new Map<ChildProcess, string>();
  const stop = async (): Promise<void> => {
    await stopProcesses(children);
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    const [etcdPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const apiAddress = options.apiAddress ?? '127.0.0.1';
    const { cert, key } = await makeServingCertificate(workDir, apiAddress);
    // The serving certificate is its own CA and also signs client certificates (clientCertificateFor).
    const clientCa = join(workDir, 'client-ca.crt');
    await copyFile(cert, clientCa);
    const saKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const saKeyPath = join(workDir, 'sa.key');
    const saPubPath = join(workDir, 'sa.pub');
    await writeFile(saKeyPath, saKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await writeFile(saPubPath, saKeys.publicKey.export({ type: 'spki', format: 'pem' }));
    const adminToken = randomBytes(24).toString('hex');
    const tokensPath = join(workDir, 'tokens.csv');
    // A static token in system:masters is the admin; ServiceAccounts get real tokens from TokenRequest.
    await writeFile(tokensPath, `${adminToken},applyset-admin,applyset-admin,system:masters\n`);
    // The API server's own record of one user's requests, for tests that count what a controller asks
    // of the server (auditedRequests); every other request goes unrecorded.
    const auditPolicyPath = join(workDir, 'audit-policy.yaml');
    await writeFile(auditPolicyPath, AUDIT_POLICY);

    const track = (name: string, child: ChildProcess): void => {
      children.push(child);
      child.once('exit', (code, signal) => exits.set(child, `${name} exit code ${code ?? signal}`));
    };

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    log(`control plane: starting etcd on ${etcdUrl}`);
    const etcdLog = join(workDir, 'etcd.log');
    const etcd = startProcess(
      join(binDir, 'etcd'),
      [
        '--name=default',
        `--data-dir=${join(workDir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
        // Test data is thrown away: skipping fsync makes every write an order of magnitude cheaper.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      etcdLog,
      options.ownerPid,
    );
    track('etcd', etcd);
    await waitForProcess(
      'etcd',
      () => httpOk(`${etcdUrl}/health`),
      readyTimeoutMs,
      () => exits.get(etcd),
    ).catch(async (error: unknown) => {
      throw new ControlPlaneError(`${(error as Error).message}\n${await tail(etcdLog)}`, { cause: error });
    });

    const server = `https://${apiAddress}:${apiPort}`;
    log(`control plane: starting kube-apiserver on ${server}`);
    const apiLog = join(workDir, 'kube-apiserver.log');
    const startApiServer = async (): Promise<ChildProcess> => {
      const apiserver = startProcess(
        join(binDir, 'kube-apiserver'),
        [
          `--etcd-servers=${etcdUrl}`,
          `--bind-address=${apiAddress}`,
          `--advertise-address=${apiAddress}`,
          `--secure-port=${apiPort}`,
          `--tls-cert-file=${cert}`,
          `--tls-private-key-file=${key}`,
          `--token-auth-file=${tokensPath}`,
          `--client-ca-file=${clientCa}`,
          '--authorization-mode=RBAC',
          `--service-account-key-file=${saPubPath}`,
          `--service-account-signing-key-file=${saKeyPath}`,
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          '--api-audiences=https://kubernetes.default.svc.cluster.local',
          '--service-cluster-ip-range=10.96.0.0/16',
          '--allow-privileged=true',
          `--profiling=${options.profiling === true}`,
          `--cert-dir=${join(workDir, 'certs')}`,
          `--audit-policy-file=${auditPolicyPath}`,
          `--audit-log-path=${join(workDir, AUDIT_LOG_FILE)}`,
          '--audit-log-format=json',
          // Each event is written before the request's handler returns, so a test that saw an answer
          // finds its record once the next request of the same user is recorded.
          '--audit-log-mode=blocking',
          // The node profile's kubelet is reached at its node IP: its name is in no DNS, and a lookup
          // would leave the machine.
          ...(options.apiAddress === undefined ? [] : ['--kubelet-preferred-address-types=InternalIP']),
          '--v=0',
        ],
        apiLog,
        options.ownerPid,
      );
      track('kube-apiserver', apiserver);
      await waitForProcess(
        'kube-apiserver',
        async () => (await apiGet(server, '/readyz', cert, adminToken)).status === 200,
        readyTimeoutMs,
        () => exits.get(apiserver),
      ).catch(async (error: unknown) => {
        throw new ControlPlaneError(`${(error as Error).message}\n${await tail(apiLog)}`, { cause: error });
      });
      return apiserver;
    };
    let apiserver = await startApiServer();
    const restartApiServer = async (downMs: number): Promise<void> => {
      await stopProgram(apiserver, 'kube-apiserver', 5_000);
      log(`control plane: kube-apiserver down for ${downMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      apiserver = await startApiServer();
    };

    const caData = await readFile(cert, 'utf8');
    const kubeconfigPath = join(workDir, 'admin.kubeconfig');
    await writeFile(kubeconfigPath, kubeconfigYaml(server, caData, 'applyset-admin', adminToken), {
      mode: 0o600,
    });

    log('control plane: starting kube-controller-manager');
    const controllers =
      options.controllers ??
      'garbage-collector-controller,namespace-controller,serviceaccount-controller,clusterrole-aggregation-controller';
    const kcmLog = join(workDir, 'kube-controller-manager.log');
    const kcm = startProcess(
      join(binDir, 'kube-controller-manager'),
      [
        `--kubeconfig=${kubeconfigPath}`,
        `--authentication-kubeconfig=${kubeconfigPath}`,
        `--authorization-kubeconfig=${kubeconfigPath}`,
        // Only what the tests rely on: cascading deletes, namespace deletion, default ServiceAccounts, and
        // ClusterRole aggregation, which fills the built-in `admin`, `edit` and `view` as every cluster
        // does (the README's `--clusterrole=edit` grants nothing without it). Workload controllers stay
        // off so live objects change only when a test changes them.
        `--controllers=${controllers}`,
        // Pods' projected service-account volumes carry this CA (the kube-root-ca.crt ConfigMap).
        `--root-ca-file=${cert}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${await freePort()}`,
        `--cert-dir=${join(workDir, 'kcm-certs')}`,
        '--concurrent-gc-syncs=5',
        '--v=0',
      ],
      kcmLog,
      options.ownerPid,
    );
    track('kube-controller-manager', kcm);
    // The controller manager is ready once its ServiceAccount controller has filled in "default" and,
    // where it runs, its aggregation controller has filled in `edit`.
    const aggregates = aggregatesClusterRoles(controllers);
    await waitForProcess(
      'kube-controller-manager',
      async () =>
        (await apiGet(server, '/api/v1/namespaces/default/serviceaccounts/default', cert, adminToken))
          .status === 200 &&
        (!aggregates || hasRules(await apiGet(server, EDIT_ROLE_PATH, cert, adminToken))),
      readyTimeoutMs,
      () => exits.get(kcm),
    ).catch(async (error: unknown) => {
      throw new ControlPlaneError(`${(error as Error).message}\n${await tail(kcmLog)}`, { cause: error });
    });

    const pids = children.map((c) => c.pid).filter((p): p is number => p !== undefined);
    log('control plane: ready');
    return { server, kubeconfigPath, adminToken, caPath: cert, workDir, pids, stop, restartApiServer };
  } catch (error) {
    await stop();
    throw error;
  }
}

const EDIT_ROLE_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles/edit';

/** Whether a `--controllers` list of kube-controller-manager runs ClusterRole aggregation. */
function aggregatesClusterRoles(controllers: string): boolean {
  const names = controllers.split(',');
  if (names.includes('-clusterrole-aggregation-controller')) return false;
  return names.includes('*') || names.includes('clusterrole-aggregation-controller');
}

function hasRules(response: { status: number; body: string }): boolean {
  if (response.status !== 200) return false;
  const role = JSON.parse(response.body) as { rules?: unknown[] | null };
  return (role.rules ?? []).length > 0;
}

/** Stops processes recorded by another process (used by `cluster:down`). */
export async function stopRecordedControlPlane(info: ControlPlaneInfo): Promise<void> {
  for (const pid of [...info.pids].reverse()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      continue;
    }
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  await rm(info.workDir, { recursive: true, force: true });
}

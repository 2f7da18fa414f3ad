/**
 * The last lines of the log of each failed hook Job of an ApplySet's last run (failed-hook-jobs.ts), for
 * its web page: the Job's newest Pod is found by the Job's labels, and its log read from the API server,
 * which asks the kubelet of the node the Pod ran on. Read through the client the page reads the set's
 * objects with, so as the same account (the set's own in the controller, the viewer's in `applyset ui`):
 * what that account may not read is said, not shown. When there is no log to show, the reason names the
 * Job: it is gone (its delete policy removed it), it has no Pod, the Pod has no log yet or its node
 * cannot be reached (the API server's words), or the account may not read it (which permission).
 * Bounded: the first MAX_JOBS Jobs, LOG_BYTES of each log, READ_TIMEOUT_MS for each Job.
 */
import { messageOf } from '../errors/message-of.js';
import { KubeApiError } from '../kube/kube-api-error.js';
import type { KubeClient } from '../kube/kube-client.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import type { FailedHookJob } from './failed-hook-jobs.js';
import { lastLogLines } from './log-lines.js';

/** A failed hook Job with the last lines of its newest Pod's log, or why there are none. */
export type HookJobLog = FailedHookJob &
  (
    | { readonly pod: string; readonly container: string; readonly lines: readonly string[] }
    | { readonly noLog: string }
  );

/** Lines shown of each log. */
const HOOK_LOG_LINES = 10;
/** Jobs whose logs one page reads; the others say so. */
const MAX_JOBS = 5;
/** The bound on each log's answer (`limitBytes`). */
const LOG_BYTES = 16 * 1024;
/** How long the reads of one Job may take, its Job, Pods and log together. */
const READ_TIMEOUT_MS = 5_000;

/** No log can be shown, and why. */
class NoLog extends Error {
  override readonly name = 'NoLog';
}

/**
 * Reads the logs of `jobs` through `client` (a string: why this view reads none), the first MAX_JOBS
 * at once; never rejects but when `signal` (the page's) aborts.
 */
export function readHookJobLogs(
  jobs: readonly FailedHookJob[],
  client: KubeClient | string,
  signal?: AbortSignal,
): Promise<HookJobLog[]> {
  return Promise.all(
    jobs.map(async (job, index): Promise<HookJobLog> => {
      if (index >= MAX_JOBS) return { ...job, noLog: `not read: a page reads the first ${MAX_JOBS} only` };
      if (typeof client === 'string') return { ...job, noLog: client };
      const deadline = AbortSignal.timeout(READ_TIMEOUT_MS);
      try {
        return { ...job, ...(await readLog(client, job, AbortSignal.any([deadline, signal ?? deadline]))) };
      } catch (error) {
        if (signal?.aborted === true) throw error;
        if (error instanceof NoLog) return { ...job, noLog: error.message };
        if (deadline.aborted) return { ...job, noLog: `not read within ${READ_TIMEOUT_MS / 1000} s` };
        return { ...job, noLog: `the API server could not be reached: ${messageOf(error)}` };
      }
    }),
  );
}

async function readLog(
  client: KubeClient,
  job: FailedHookJob,
  signal: AbortSignal,
): Promise<{ readonly pod: string; readonly container: string; readonly lines: readonly string[] }> {
  const ns = encodeURIComponent(job.namespace);
  const live = await get(client, `/apis/batch/v1/namespaces/${ns}/jobs/${encodeURIComponent(job.name)}`, {
    signal,
    permission: `get jobs.batch in namespace ${job.namespace}`,
    notFound: 'the Job no longer exists: its delete policy removed it after it failed, or it was deleted',
  });
  const pod = newestPod(await podsOf(client, job, uidOf(live), signal));
  if (pod === undefined) throw new NoLog('the Job has no Pod: none was started yet, or they were deleted');
  const podName = String(metadataOf(pod)['name'] ?? '');
  const container = failedContainer(pod);
  const text = await get(client, `/api/v1/namespaces/${ns}/pods/${encodeURIComponent(podName)}/log`, {
    query: { container, tailLines: String(HOOK_LOG_LINES), limitBytes: String(LOG_BYTES) },
    // The API server answers `text/plain` alone with 406; kubectl asks with `*/*` too.
    accept: 'text/plain, */*',
    maxBodyBytes: LOG_BYTES + 4096,
    signal,
    permission: `get pods/log in namespace ${job.namespace}`,
    notFound: `its Pod ${podName} no longer exists`,
    otherwise: (detail) => `its Pod ${podName} has no log yet, or its node cannot be reached: ${detail}`,
  });
  const lines = lastLogLines(typeof text === 'string' ? text : '', HOOK_LOG_LINES);
  if (lines.length === 0)
    throw new NoLog(`its Pod ${podName} wrote nothing to its log (container ${container})`);
  return { pod: podName, container, lines };
}

/** The Job's Pods by its label, then by the label of Jobs before Kubernetes 1.27; the Job's own only. */
async function podsOf(
  client: KubeClient,
  job: FailedHookJob,
  uid: string | undefined,
  signal: AbortSignal,
): Promise<JsonObject[]> {
  for (const label of ['batch.kubernetes.io/job-name', 'job-name']) {
    const list = await get(client, `/api/v1/namespaces/${encodeURIComponent(job.namespace)}/pods`, {
      query: { labelSelector: `${label}=${job.name}` },
      signal,
      permission: `list pods in namespace ${job.namespace}`,
    });
    const items = isJsonObject(list) && Array.isArray(list['items']) ? list['items'] : [];
    // An earlier Job of the same name (a hook replaced by a later run) may leave Pods behind a while.
    const own = items.filter(isJsonObject).filter((pod) => uid === undefined || ownedBy(pod, uid));
    if (own.length > 0) return own;
  }
  return [];
}

/**
 * The Pod created last (by creationTimestamp, then name), undefined for none.
 * @internal test seam: its unit test picks among Pods no control plane without a node would make
 */
export function newestPod(pods: readonly JsonObject[]): JsonObject | undefined {
  const key = (pod: JsonObject) =>
    `${String(metadataOf(pod)['creationTimestamp'] ?? '')} ${String(metadataOf(pod)['name'] ?? '')}`;
  return [...pods].sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0))[0];
}

/**
 * The container that ended with a non-zero exit code, else the Pod's first.
 * @internal test seam: its unit test gives container states only a node would make
 */
export function failedContainer(pod: JsonObject): string {
  const status = isJsonObject(pod['status']) ? pod['status'] : {};
  const statuses = Array.isArray(status['containerStatuses']) ? status['containerStatuses'] : [];
  const failed = statuses.filter(isJsonObject).find((container) =>
    [container['state'], container['lastState']].some((state) => {
      const terminated = isJsonObject(state) ? state['terminated'] : undefined;
      return isJsonObject(terminated) && terminated['exitCode'] !== 0;
    }),
  );
  if (failed !== undefined) return String(failed['name']);
  const spec = isJsonObject(pod['spec']) ? pod['spec'] : {};
  const first = Array.isArray(spec['containers']) ? spec['containers'][0] : undefined;
  return isJsonObject(first) ? String(first['name'] ?? '') : '';
}

function metadataOf(object: JsonValue): JsonObject {
  return isJsonObject(object) && isJsonObject(object['metadata']) ? object['metadata'] : {};
}

function uidOf(object: JsonValue): string | undefined {
  const uid = metadataOf(object)['uid'];
  return typeof uid === 'string' ? uid : undefined;
}

function ownedBy(pod: JsonObject, uid: string): boolean {
  const owners = metadataOf(pod)['ownerReferences'];
  return Array.isArray(owners) && owners.some((owner) => isJsonObject(owner) && owner['uid'] === uid);
}

/** A GET whose refusal is said in words: which permission it needed, what a 404 means, else why. */
async function get(
  client: KubeClient,
  path: string,
  options: {
    readonly query?: Readonly<Record<string, string>>;
    readonly accept?: string;
    readonly maxBodyBytes?: number;
    readonly signal: AbortSignal;
    readonly permission: string;
    readonly notFound?: string;
    readonly otherwise?: (detail: string) => string;
  },
): Promise<JsonValue> {
  const { permission, notFound, otherwise, ...request } = options;
  try {
    return await client.request({ method: 'GET', path, ...request });
  } catch (error) {
    if (!(error instanceof KubeApiError)) throw error;
    throw new NoLog(noLogReason(error, { permission, notFound, otherwise }));
  }
}

/**
 * Why a refused read leaves no log: forbidden (naming the permission), not found, or the server's words.
 * @internal test seam: its unit test gives it each refusal
 */
export function noLogReason(
  error: KubeApiError,
  step: {
    readonly permission: string;
    readonly notFound?: string;
    readonly otherwise?: (detail: string) => string;
  },
): string {
  if (error.status === 403) {
    return `forbidden: the account the page reads the set's objects as may not ${step.permission}: ${error.detail}`;
  }
  if (error.status === 404 && step.notFound !== undefined) return step.notFound;
  return step.otherwise?.(error.detail) ?? `the API server refused it: ${error.detail}`;
}

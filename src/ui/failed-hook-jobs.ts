/**
 * The hook Jobs that failed in an ApplySet's last run, read from its status: the Ready condition's
 * HookFailed message names each failed hook as `<phase> hook job.batch/<name> -n <namespace> failed: …`
 * (HookFailedError, src/apply/hooks/run-hooks.ts). The web view reads these Jobs' logs
 * (hook-job-logs.ts); Events are not used, as they may be of an earlier run.
 */
import type { ApplySet } from '../api/applyset-types.js';
import { describeObjectRef } from '../manifests/object-ref.js';

/** A hook Job of the last run that failed. */
export interface FailedHookJob {
  /** PreSync, Sync, PostSync, SyncFail or PreDelete. */
  readonly phase: string;
  readonly namespace: string;
  readonly name: string;
}

/** `<phase> hook job.batch/<name>[ -n <namespace>] failed: `: names and namespaces hold no space. */
const FAILED_JOB =
  /(?:^|; )(\w+) hook job\.batch\/([a-z0-9][a-z0-9.-]*)(?: -n ([a-z0-9][a-z0-9-]*))? failed: /g;

/** The failed hook Jobs the set's Ready condition names, each once, in its order; none unless HookFailed. */
export function failedHookJobs(applySet: ApplySet): FailedHookJob[] {
  const ready = applySet.status?.conditions?.find((condition) => condition.type === 'Ready');
  if (ready?.reason !== 'HookFailed') return [];
  const jobs: FailedHookJob[] = [];
  for (const match of ready.message.matchAll(FAILED_JOB)) {
    const job = {
      phase: match[1] ?? '',
      name: match[2] ?? '',
      namespace: match[3] ?? applySet.metadata.namespace,
    };
    if (!jobs.some((seen) => seen.namespace === job.namespace && seen.name === job.name)) jobs.push(job);
  }
  return jobs;
}

/** How the page names a Job: as the hook messages do (`job.batch/pre -n team-a`). */
export function describeJob(job: Pick<FailedHookJob, 'namespace' | 'name'>): string {
  return describeObjectRef({ group: 'batch', kind: 'Job', namespace: job.namespace, name: job.name });
}

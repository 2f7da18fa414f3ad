// Jobs in the e2e profile, which runs no Job controller nor kubelet: a test plays the Job's controller,
// writing the status it would (with the conditions the API server requires of a finished Job).
import * as k8s from '@kubernetes/client-node';
import { waitFor } from './wait-for.js';

/** A Job of one container that never runs here, with these annotations. */
export const jobYaml = (name: string, annotations: Record<string, string>): string => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  annotations: ${JSON.stringify(annotations)}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: registry.example/migrate:v1}]
`;

/** Reads a Job, undefined when there is none. */
export function readJob(
  batch: k8s.BatchV1Api,
  namespace: string,
  name: string,
): Promise<k8s.V1Job | undefined> {
  return batch.readNamespacedJob({ namespace, name }).catch((error: { code?: number }) => {
    if (error.code === 404) return undefined;
    throw error;
  });
}

/** Ends the Job, once it exists, as its controller would. */
export async function finishJob(
  batch: k8s.BatchV1Api,
  namespace: string,
  name: string,
  outcome: 'Complete' | 'Failed',
): Promise<void> {
  const created = await waitFor(`Job ${name} created`, () => readJob(batch, namespace, name), 60_000);
  const now = new Date();
  const conditions =
    outcome === 'Complete'
      ? [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now },
          { type: 'Complete', status: 'True', lastTransitionTime: now },
        ]
      : [
          { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: now },
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            message: 'Job has reached the specified backoff limit',
            lastTransitionTime: now,
          },
        ];
  await batch.replaceNamespacedJobStatus({
    namespace,
    name,
    body: {
      ...created,
      status: {
        startTime: now,
        ...(outcome === 'Complete' ? { completionTime: now, succeeded: 1 } : { failed: 1 }),
        conditions,
      } as k8s.V1JobStatus,
    },
  });
}

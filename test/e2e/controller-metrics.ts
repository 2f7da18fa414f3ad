// Reading the controller's own /metrics in e2e suites: the API requests it sent, counted by verb in
// applyset_kube_requests_total, which holds only the requests of the one namespace it watches.

import { httpGet, type ControllerProcess } from './e2e-kit.js';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const VERBS: readonly Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The exposition lines of the controller's /metrics, as it serves them now. */
export async function metricsLines(controller: ControllerProcess): Promise<string[]> {
  const { body } = await httpGet(controller.port, '/metrics');
  return body.split('\n');
}

/** applyset_kube_requests_total by verb, so far. */
export async function kubeRequestsByVerb(controller: ControllerProcess): Promise<Record<Verb, number>> {
  const counts: Record<Verb, number> = { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 };
  for (const line of await metricsLines(controller)) {
    const match = /^applyset_kube_requests_total\{verb="([A-Z]+)"\} (\d+)/.exec(line);
    if (match !== null && match[1] !== undefined && match[1] in counts)
      counts[match[1] as Verb] = Number(match[2]);
  }
  return counts;
}

export type WriteVerb = Exclude<Verb, 'GET'>;

/** The verbs of `counts` that change something: every verb but GET. */
export const writesByVerb = ({
  POST,
  PUT,
  PATCH,
  DELETE,
}: Record<Verb, number>): Record<WriteVerb, number> => ({
  POST,
  PUT,
  PATCH,
  DELETE,
});

/** How many of `counts` change something. */
export const writeTotal = (counts: Record<Verb, number>): number =>
  counts.POST + counts.PUT + counts.PATCH + counts.DELETE;

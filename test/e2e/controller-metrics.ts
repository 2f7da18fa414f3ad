// Reading the controller's own /metrics in e2e suites: the API requests it sent, counted by cluster
// and verb in applyset_kube_requests_total, which holds only the requests of the one namespace it watches.

import { httpGet, type ControllerProcess } from './e2e-kit.js';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const VERBS: readonly Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The exposition lines of the controller's /metrics, as it serves them now. */
export async function metricsLines(controller: ControllerProcess): Promise<string[]> {
  const { body } = await httpGet(controller.port, '/metrics');
  return body.split('\n');
}

/**
 * applyset_kube_requests_total by verb, so far, of one cluster: `local` (the default) is the
 * controller's own, a remote cluster is its server's host:port.
 */
export async function kubeRequestsByVerb(
  controller: ControllerProcess,
  cluster = 'local',
): Promise<Record<Verb, number>> {
  const counts: Record<Verb, number> = { GET: 0, POST: 0, PUT: 0, PATCH: 0, DELETE: 0 };
  const prefix = `applyset_kube_requests_total{cluster="${cluster}",verb="`;
  for (const line of await metricsLines(controller)) {
    if (!line.startsWith(prefix)) continue;
    const match = /^([A-Z]+)"\} (\d+)/.exec(line.slice(prefix.length));
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

/**
 * API Priority and Fairness on the real API server, set so one subject's requests are turned away:
 * a priority level of no seats of its own, which runs one request at a time (the one it lets in when
 * nothing runs) and rejects the others with 429 and `Retry-After` rather than queue them, and a flow
 * schema that sends the subject's requests there. Both named `name`.
 */
import type { KubeClient } from '../../src/kube/kube-client.js';
import { waitFor } from '../e2e/wait-for.js';

const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';

/** A flow schema subject, as the API takes it. */
export type FlowSubject =
  | { readonly kind: 'User'; readonly user: { readonly name: string } }
  | {
      readonly kind: 'ServiceAccount';
      readonly serviceAccount: { readonly namespace: string; readonly name: string };
    };

export interface OneSeatFlow {
  /** The requests of the flow schema the API server counted, from its metrics. */
  counted(what: 'dispatched' | 'rejected'): Promise<number>;
  /** Deletes the flow schema and the priority level. */
  remove(): Promise<void>;
}

/**
 * Creates the two objects with `admin` and waits until the server classifies `probe`'s requests (a
 * client acting as the subject; it must be allowed what it asks) by the new flow schema.
 */
export async function oneSeatFlow(
  admin: KubeClient,
  name: string,
  subject: FlowSubject,
  probe: () => Promise<unknown>,
): Promise<OneSeatFlow> {
  await admin.request({
    method: 'POST',
    path: `${FLOWCONTROL}/prioritylevelconfigurations`,
    body: JSON.stringify({
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    }),
  });
  await admin.request({
    method: 'POST',
    path: `${FLOWCONTROL}/flowschemas`,
    body: JSON.stringify({
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        matchingPrecedence: 100,
        rules: [
          {
            subjects: [subject],
            resourceRules: [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true },
            ],
          },
        ],
      },
    }),
  });
  const counted = async (what: 'dispatched' | 'rejected') => {
    const metrics = String(
      await admin.request({
        method: 'GET',
        path: '/metrics',
        accept: 'text/plain, */*',
        maxBodyBytes: 64 << 20,
      }),
    );
    const series = `apiserver_flowcontrol_${what}_requests_total{`;
    return metrics
      .split('\n')
      .filter((line) => line.startsWith(series) && line.includes(`flow_schema="${name}"`))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };
  // The API server takes new flow control objects up a moment later: until then the subject's
  // requests are classified as anyone's.
  await waitFor('the API server to classify the subject by the new flow schema', async () => {
    await probe();
    return (await counted('dispatched')) > 0 ? true : undefined;
  });
  return {
    counted,
    async remove() {
      for (const kind of ['flowschemas', 'prioritylevelconfigurations']) {
        await admin
          .request({ method: 'DELETE', path: `${FLOWCONTROL}/${kind}/${name}` })
          .catch(() => undefined);
      }
    },
  };
}

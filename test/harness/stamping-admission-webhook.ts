/**
 * A mutating admission webhook the real API server calls for every ConfigMap written in one
 * namespace: it stamps the ConfigMap with the annotation `stamped-v`, a copy of its `data.v`. What a
 * platform's webhook does (a default, a sidecar, a label): a preview shows its change only if it asks
 * the server. HTTPS on loopback with a self-signed certificate, as slow-admission-webhook.ts.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../e2e/wait-for.js';
import { selfSignedCertificate } from './self-signed-certificate.js';
import { adminKubeConfig } from './test-cluster.js';

export const STAMP_ANNOTATION = 'stamped-v';
/** The dry-run ConfigMap that shows the API server calls the webhook. */
const PROBE = 'applyset-stamp-probe';

interface Review {
  readonly request?: {
    readonly uid?: string;
    readonly object?: { metadata?: { annotations?: Record<string, string> }; data?: Record<string, string> };
  };
}

/** The JSONPatch that stamps `object`: one annotation, or the whole map when it has none. */
function stampOf(object: NonNullable<Review['request']>['object']): object[] {
  const value = object?.data?.['v'] ?? '';
  if (object?.metadata?.annotations === undefined)
    return [{ op: 'add', path: '/metadata/annotations', value: { [STAMP_ANNOTATION]: value } }];
  return [{ op: 'add', path: `/metadata/annotations/${STAMP_ANNOTATION}`, value }];
}

export interface StampingAdmissionWebhook {
  /** Removes the webhook's configuration from the cluster and stops the server. */
  close(): Promise<void>;
}

export async function startStampingAdmissionWebhook(namespace: string): Promise<StampingAdmissionWebhook> {
  const { cert, key } = await selfSignedCertificate();
  let called = false;
  const server = createServer({ cert, key }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      called = true;
      const patch = Buffer.from(JSON.stringify(stampOf(review.request?.object))).toString('base64');
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request?.uid ?? '', allowed: true, patchType: 'JSONPatch', patch },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const admission = adminKubeConfig().makeApiClient(k8s.AdmissionregistrationV1Api);
  const name = `stamp-${namespace}`;
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [
        {
          name: 'stamp.applyset.test',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(cert).toString('base64') },
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          rules: [
            {
              apiGroups: [''],
              apiVersions: ['v1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['configmaps'],
            },
          ],
        },
      ],
    },
  });
  // The API server takes a new webhook configuration up a moment later.
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  await waitFor('the API server to call the stamping webhook', async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: PROBE } }, dryRun: 'All' });
    return called ? true : undefined;
  });
  return {
    async close() {
      await admission.deleteMutatingWebhookConfiguration({ name }).catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

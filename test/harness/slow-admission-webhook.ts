/**
 * A validating admission webhook the real API server calls for every ConfigMap written in one
 * namespace, which answers "allowed" only after `delayMs`, or when released: each write the server
 * takes is held that long, so a test can see how many writes a client has in flight at once (the
 * webhook counts them) or catch a write mid-flight. HTTPS on loopback with a self-signed certificate
 * made by openssl, as the API server calls webhooks over TLS only.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../e2e/wait-for.js';
import { selfSignedCertificate } from './self-signed-certificate.js';
import { adminKubeConfig } from './test-cluster.js';

/** The dry-run ConfigMap that shows the API server calls the webhook: answered at once, not counted. */
const PROBE = 'applyset-webhook-probe';

const allowed = (uid: string | undefined) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: uid ?? '', allowed: true },
});

export interface SlowAdmissionWebhook {
  /** Writes the webhook is holding now. */
  inFlight(): number;
  /** The most writes it ever held at once. */
  maxInFlight(): number;
  /** Writes it answered. */
  answered(): number;
  /** Answers every held write now, and every later one at once. */
  release(): void;
  /** Removes the webhook's configuration from the cluster and stops the server. */
  close(): Promise<void>;
}

/**
 * Starts the webhook for ConfigMap creates and updates in `namespace`. `delayMs` undefined: each write
 * is held until release() (or the server's own webhook timeout, `timeoutSeconds`, fails it).
 */
export async function startSlowAdmissionWebhook(options: {
  readonly namespace: string;
  readonly delayMs?: number;
  readonly timeoutSeconds?: number;
}): Promise<SlowAdmissionWebhook> {
  const { cert, key } = await selfSignedCertificate();
  let inFlight = 0;
  let maxInFlight = 0;
  let answered = 0;
  let released = false;
  let active = false;
  const waiting = new Set<() => void>();
  const server = createServer({ cert, key }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        request?: { uid?: string; name?: string };
      };
      if (review.request?.name === PROBE) {
        active = true;
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(allowed(review.request.uid)));
        return;
      }
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const answer = () => {
        waiting.delete(answer);
        inFlight -= 1;
        answered += 1;
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(allowed(review.request?.uid)));
      };
      if (released) answer();
      else if (options.delayMs !== undefined) setTimeout(answer, options.delayMs);
      else waiting.add(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const admission = adminKubeConfig().makeApiClient(k8s.AdmissionregistrationV1Api);
  const name = `slow-${options.namespace}`;
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name },
      webhooks: [
        {
          name: 'slow.applyset.test',
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: options.timeoutSeconds ?? 10,
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle: Buffer.from(cert).toString('base64') },
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': options.namespace } },
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
  // The API server takes a new webhook configuration up a moment later: until it calls this one, a
  // write would pass unheld.
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  await waitFor('the API server to call the webhook', async () => {
    await core.createNamespacedConfigMap({
      namespace: options.namespace,
      body: { metadata: { name: PROBE } },
      dryRun: 'All',
    });
    return active ? true : undefined;
  });
  return {
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    answered: () => answered,
    release() {
      released = true;
      for (const answer of [...waiting]) answer();
    },
    async close() {
      await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
      released = true;
      for (const answer of [...waiting]) answer();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// The API server's own count of a controller's requests: its audit log, which the test control plane
// writes for one user only (AUDITED_USER, see control-plane.ts). A controller run with
// auditedKubeconfig() is that user; auditedRequests() reads what the server recorded of it.

import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { AUDIT_LOG_FILE, AUDITED_USER } from '../harness/control-plane-files.js';
import {
  adminKubeConfig,
  adminKubeconfigPath,
  clientCertificateFor,
  kubeconfigDir,
} from '../harness/test-cluster.js';
import { waitFor } from './wait-for.js';

/** One request as the audit log records it (level Metadata, stage ResponseComplete). */
export interface AuditedRequest {
  /** The audit verb: get, list, watch, create, patch, update, delete. */
  readonly verb: string;
  readonly resource: string;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

function auditLogPath(): string {
  const path = join(dirname(adminKubeconfigPath()), AUDIT_LOG_FILE);
  if (!existsSync(path)) {
    throw new Error(
      `the control plane keeps no audit log (${path}): it was started before audit logging; restart it`,
    );
  }
  return path;
}

/** A kubeconfig acting as AUDITED_USER, in system:masters (the rights the chart's role grants and more). */
export async function auditedKubeconfig(): Promise<string> {
  const { cert, key } = await clientCertificateFor(AUDITED_USER, ['system:masters']);
  const admin = adminKubeConfig();
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('admin kubeconfig has no current cluster');
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [
      {
        name: AUDITED_USER,
        certData: Buffer.from(cert).toString('base64'),
        keyData: Buffer.from(key).toString('base64'),
      },
    ],
    contexts: [{ name: AUDITED_USER, cluster: cluster.name, user: AUDITED_USER }],
    currentContext: AUDITED_USER,
  });
  const path = join(await kubeconfigDir('applyset-audited-'), 'kubeconfig');
  await writeFile(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}

/**
 * The requests of AUDITED_USER in `namespace` that the server answered so far. To be sure the records
 * of what the test already saw answered are all written, the test first asks a marker of its own as
 * the same user (recordMarker), which is recorded after them.
 */
export async function auditedRequests(namespace: string): Promise<AuditedRequest[]> {
  const text = await readFile(auditLogPath(), 'utf8');
  const requests: AuditedRequest[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const event = JSON.parse(line) as {
      stage?: string;
      verb?: string;
      user?: { username?: string };
      objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
    };
    if (event.stage !== 'ResponseComplete' || event.user?.username !== AUDITED_USER) continue;
    if (event.objectRef?.namespace !== namespace) continue;
    requests.push({
      verb: event.verb ?? '',
      resource: event.objectRef.resource ?? '',
      name: event.objectRef.name,
      subresource: event.objectRef.subresource,
    });
  }
  return requests;
}

let markers = 0;

/**
 * Asks, as AUDITED_USER, for a ConfigMap that does not exist, and waits until the audit log has it:
 * every request answered before it is then in the log too. Returns the marker's name, to leave out.
 */
export async function recordMarker(kubeconfig: string, namespace: string): Promise<string> {
  markers += 1;
  const name = `audit-marker-${markers}-${Date.now()}`;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  try {
    await kc.makeApiClient(k8s.CoreV1Api).readNamespacedConfigMap({ namespace, name });
  } catch (error) {
    if ((error as { code?: number }).code !== 404) throw error;
  }
  await waitFor(`the audit log to record ${name}`, async () =>
    (await auditedRequests(namespace)).some((request) => request.name === name) ? true : undefined,
  );
  return name;
}

/**
 * A LIST of a collection the controller's informers hold (ApplySets, Notifications, ServiceAccounts):
 * at their start, after a watch expired, or once a minute while a CRD is missing. Not a reconcile's.
 */
export const isInformerList = (request: AuditedRequest): boolean =>
  request.verb === 'list' && ['applysets', 'notifications', 'serviceaccounts'].includes(request.resource);

/**
 * The requests a reconcile makes, by `verb resource[/subresource]`: the markers, the informers'
 * long-running watches and LISTs (isInformerList) and the leader election's Lease (kept in the watched
 * namespace) left out.
 */
export function countByVerb(requests: readonly AuditedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of requests) {
    if (request.name?.startsWith('audit-marker-') === true) continue;
    if (request.verb === 'watch' || request.resource === 'leases' || isInformerList(request)) continue;
    const key = `${request.verb} ${request.resource}${request.subresource === undefined ? '' : `/${request.subresource}`}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

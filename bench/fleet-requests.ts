// What the API server counted of the fleet bench's controllers: apiserver_request_total by `VERB
// resource` between two reads (every phase), and the audit log of one user (the LISTs after the API
// server restarted, when the control plane's own controllers relist too and only the audit log tells
// whose a LIST was).
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { ControlPlaneInfo } from '../test/harness/control-plane.js';
import { clientCertificateFor } from '../test/harness/test-cluster.js';
import { AUDIT_LOG_FILE, AUDITED_USER } from '../test/harness/control-plane-files.js';

const execFileAsync = promisify(execFile);

/** apiserver_request_total summed by `VERB resource`, the control plane's own leases left out. */
export type RequestCounts = Map<string, number>;

export async function kubectl(kubeconfig: string, args: readonly string[], input?: string): Promise<string> {
  const child = execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

const label = (line: string, name: string): string => {
  const start = line.indexOf(`${name}="`);
  if (start < 0 || (line[start - 1] !== '{' && line[start - 1] !== ',')) return '';
  const from = start + name.length + 2;
  return line.slice(from, line.indexOf('"', from));
};

const NOT_OURS = ['leases', 'endpoints', 'endpointslices', 'ipaddresses', ''];

export async function serverRequests(kubeconfig: string): Promise<RequestCounts> {
  const counts: RequestCounts = new Map();
  for (const line of (await kubectl(kubeconfig, ['get', '--raw', '/metrics'])).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = label(line, 'verb') || '?';
    const resource = label(line, 'resource');
    const subresource = label(line, 'subresource');
    // Not the controller's: the control plane's own leases and endpoints (and the controller's Lease
    // renewals), the IPAddress the API server itself creates for a Service's cluster IP, requests that
    // name no resource (these /metrics reads), and the bench's creates of the ApplySets.
    if (NOT_OURS.includes(resource)) continue;
    const key = `${verb} ${resource}${subresource === '' ? '' : `/${subresource}`}`;
    if (key === 'POST applysets') continue;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/** after − before, per `VERB resource`; rows that did not change left out. */
export function delta(before: RequestCounts, after: RequestCounts): RequestCounts {
  const rows: RequestCounts = new Map();
  for (const [key, value] of [...after.entries()].sort()) {
    const change = value - (before.get(key) ?? 0);
    if (change > 0) rows.set(key, change);
  }
  return rows;
}

const WRITE_VERBS = ['POST', 'PATCH', 'PUT', 'DELETE', 'DELETECOLLECTION', 'APPLY'];

/** The requests of `counts` whose verb is one of `verbs` (all of them without). */
export function sum(counts: RequestCounts, verbs?: readonly string[]): number {
  let total = 0;
  for (const [key, value] of counts) {
    if (verbs === undefined || verbs.includes(verbOf(key))) total += value;
  }
  return total;
}

/** The verb of a `verb resource` key. */
const verbOf = (key: string) => key.slice(0, key.indexOf(' '));

export const writes = (counts: RequestCounts) => sum(counts, WRITE_VERBS);

/** The writes of `counts` in all, and when there are any, which: `2 (PATCH applysets/status 1, POST events 1)`. */
export function writesNamed(counts: RequestCounts): string {
  const total = writes(counts);
  return total === 0 ? '0' : `${total} (${countsOf(counts, WRITE_VERBS)})`;
}

export const lists = (counts: RequestCounts) => sum(counts, ['LIST']);

/**
 * `counts` divided by `per`, as `VERB resource 1.00, ...`. Rows under one per hundred left out: the
 * control plane's own (its watches restarting), not ours.
 */
export function perUnit(counts: RequestCounts, per: number): string {
  const rows: string[] = [];
  for (const [key, value] of counts) {
    if (value / per >= 0.01) rows.push(`${key} ${(value / per).toFixed(2)}`);
  }
  return rows.length === 0 ? 'none' : rows.join(', ');
}

/**
 * A kubeconfig acting as the one user the control plane's audit policy records (AUDITED_USER), in
 * system:masters as the admin is: a client certificate signed by the control plane's client CA.
 */
export async function auditedKubeconfig(controlPlane: ControlPlaneInfo, dir: string): Promise<string> {
  const { cert, key } = await clientCertificateFor(AUDITED_USER, ['system:masters'], controlPlane.workDir);
  const base64 = (pem: string) => Buffer.from(pem).toString('base64');
  const path = join(dir, 'audited.kubeconfig');
  await writeFile(
    path,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: ${controlPlane.server}\n` +
      `    certificate-authority-data: ${(await readFile(controlPlane.caPath)).toString('base64')}\n` +
      `users:\n- name: ${AUDITED_USER}\n  user:\n    client-certificate-data: ${base64(cert)}\n` +
      `    client-key-data: ${base64(key)}\n` +
      `contexts:\n- name: bench\n  context: { cluster: bench, user: ${AUDITED_USER} }\ncurrent-context: bench\n`,
    { mode: 0o600 },
  );
  return path;
}

/** The audit log's verbs as apiserver_request_total names them. */
const AUDIT_VERBS: Record<string, string> = { create: 'POST', update: 'PUT', patch: 'PATCH' };

/** `counts` as `VERB resource N, ...`, only the rows whose verb is one of `verbs`. */
export function countsOf(counts: RequestCounts, verbs: readonly string[]): string {
  const rows = [...counts]
    .filter(([key]) => verbs.includes(verbOf(key)))
    .map(([key, value]) => `${key} ${value}`);
  return rows.length === 0 ? 'none' : rows.sort().join(', ');
}

/** The audited user's requests received at or after `since` (epoch ms), by `verb resource` (and the code, when not 2xx). */
export async function auditedSince(controlPlane: ControlPlaneInfo, since: number): Promise<RequestCounts> {
  const counts: RequestCounts = new Map();
  // Read line by line: at 10,000 ApplySets the log holds hundreds of MB.
  const stream = createReadStream(join(controlPlane.workDir, AUDIT_LOG_FILE), 'utf8');
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (line === '') continue;
    const event = JSON.parse(line) as {
      stage?: string;
      verb?: string;
      requestReceivedTimestamp?: string;
      user?: { username?: string };
      objectRef?: { resource?: string };
      responseStatus?: { code?: number };
    };
    if (event.stage !== 'ResponseComplete' || event.user?.username !== AUDITED_USER) continue;
    if (Date.parse(event.requestReceivedTimestamp ?? '') < since) continue;
    if (event.objectRef?.resource === 'leases') continue;
    const verb = AUDIT_VERBS[event.verb ?? ''] ?? (event.verb ?? '?').toUpperCase();
    // A request the server refused (a custom resource's 404 until its CRD is served again after a
    // restart, a 429, a 503) is counted apart: it cost the server little and listed nothing.
    const code = event.responseStatus?.code ?? 200;
    const key = `${verb} ${event.objectRef?.resource ?? ''}${code >= 300 ? ` (answered ${code})` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

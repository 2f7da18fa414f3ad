import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ApplySet } from '../api/applyset-types.js';
import { dependencyKeysOf } from '../api/dependencies.js';
import { crossOriginRefusal } from './cross-origin-refusal.js';
import { messageOf } from '../errors/message-of.js';
import type { HealthCheckExpr } from '../health/cel-health.js';
import { fleetRow, type FleetFilter } from './fleet-row.js';
import { renderMessagePage, renderPage, signInForm } from './page-layout.js';
import { inventoryRefs } from './inventory-tree.js';
import { readObjectStates } from './read-object-states.js';
import { failedHookJobs } from './failed-hook-jobs.js';
import { readHookJobLogs } from './hook-job-logs.js';
import { renderApplySetBody } from './render-applyset-page.js';
import { renderFleetBody } from './render-fleet-page.js';
import { UI_TOKEN_COOKIE, type UiAccess, type UiViewer } from './ui-access.js';
import { UI_CSS, UI_CSS_PATH, UI_SCRIPT, UI_SCRIPT_PATH } from './ui-assets.js';
import type { UiData, UiPreview } from './ui-data.js';
import { readForm, redirect, send, sendHtml, tokenCookie } from './ui-http.js';
import { ExpiringMemo } from './expiring-memo.js';
import { createUiUpdates } from './ui-updates.js';

export interface UiServerOptions {
  /** Asked on every request but the assets and the sign-in form: who is looking (ui-access.ts). */
  readonly access: UiAccess;
  readonly data: UiData;
  /** Serve the sign-in form and offer it on a 401 (the view the controller serves). */
  readonly signIn?: boolean;
  /** Rows the fleet page lists before it offers to list all the matches; default 100. */
  readonly fleetRowLimit?: number;
  /** Live objects read for one ApplySet page; default 200. */
  readonly objectReadLimit?: number;
  /** The cluster's default CEL health checks (the controller's --health-check-exprs); a set's own win. */
  readonly healthCheckExprs?: readonly HealthCheckExpr[];
  /** How long a computed preview is reused; default 10 s. */
  readonly previewTtlMs?: number;
  readonly now?: () => number;
}

export interface UiServer {
  /** Not listening yet: the caller decides where. */
  readonly server: Server;
  /** Ends the live-update streams (a server's close waits for open connections). */
  closeUpdates(): void;
}

/** How many ApplySets' previews are kept at once (each for previewTtlMs). */
const PREVIEWS_KEPT = 256;

const UNAVAILABLE: UiPreview = {
  kind: 'unavailable',
  reason: 'This view cannot compute the next run: run `applyset diff` on the files to see it.',
};

/**
 * The web view: server-rendered pages of the ApplySets the viewer may read, the fleet at `/` and one
 * set at `/applysets/NAMESPACE/NAME`, live updates at `/updates`, and with `signIn` a token form.
 */
export function createUiServer(options: UiServerOptions): UiServer {
  const updates = createUiUpdates(options.data);
  const now = options.now ?? Date.now;
  const previews = new ExpiringMemo<UiPreview>(PREVIEWS_KEPT, options.previewTtlMs ?? 10_000, now);
  const context: RouteContext = {
    ...options,
    now,
    preview: (applySet) => cachedPreview(options, previews, applySet),
    openUpdates: (viewer, response) => updates.open(viewer, response),
  };
  const server = createServer((request, response) => {
    route(context, request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else sendHtml(response, statusOf(error), renderMessagePage('Something went wrong', messageOf(error)));
    });
  });
  return { server, closeUpdates: () => updates.close() };
}

/** The status an error asks for (503: the cluster could not check the viewer just now), else 500. */
function statusOf(error: unknown): number {
  const status = (error as { httpStatus?: unknown } | null)?.httpStatus;
  return typeof status === 'number' ? status : 500;
}

interface RouteContext extends UiServerOptions {
  readonly now: () => number;
  preview(applySet: ApplySet): Promise<UiPreview>;
  openUpdates(viewer: UiViewer, response: ServerResponse): void;
}

/** A preview is computed when a page asks for it, and reused briefly: opening pages never loops. */
function cachedPreview(
  options: UiServerOptions,
  previews: ExpiringMemo<UiPreview>,
  applySet: ApplySet,
): Promise<UiPreview> {
  const { preview } = options.data;
  if (preview === undefined) return Promise.resolve(UNAVAILABLE);
  const key = `${applySet.metadata.namespace}/${applySet.metadata.name}/${applySet.metadata.resourceVersion ?? ''}`;
  return previews.get(key, () =>
    preview(applySet, AbortSignal.timeout(60_000)).catch(
      (error: unknown): UiPreview => ({
        kind: 'unavailable',
        reason: `The preview failed: ${messageOf(error)}`,
      }),
    ),
  );
}

async function route(
  context: RouteContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://view.invalid');
  const method = request.method ?? 'GET';
  const read = method === 'GET' || method === 'HEAD';
  const immutable = { 'Cache-Control': 'public, max-age=31536000, immutable' };
  if (read && url.pathname === UI_CSS_PATH)
    return send(response, 200, 'text/css; charset=utf-8', UI_CSS, immutable);
  if (read && url.pathname === UI_SCRIPT_PATH) {
    return send(response, 200, 'text/javascript; charset=utf-8', UI_SCRIPT, immutable);
  }
  // Before anything else: a POST from another site changes nothing, signed in or not, in either mode.
  const refusal = read ? undefined : crossOriginRefusal(request.headers);
  if (refusal !== undefined) {
    return sendHtml(response, 403, renderMessagePage('Not allowed', `Refused: ${refusal}.`));
  }
  if (context.signIn === true && (url.pathname === '/sign-in' || url.pathname === '/sign-out')) {
    return signInRoute(request, response, url.pathname, method);
  }
  const decision = await context.access(request);
  if (decision.kind === 'refused') {
    const extra = decision.status === 401 && context.signIn === true ? signInForm() : undefined;
    const title = decision.status === 401 ? 'Sign-in needed' : 'Not allowed';
    return sendHtml(response, decision.status, renderMessagePage(title, decision.message, extra));
  }
  if (!read)
    return sendHtml(response, 405, renderMessagePage('Not allowed', 'Only GET and HEAD.'), {
      Allow: 'GET, HEAD',
    });
  const { viewer } = decision;
  if (url.pathname === '/') return fleetPage(context, viewer, url, response);
  if (url.pathname === '/updates') return context.openUpdates(viewer, response);
  const match = /^\/applysets\/([^/]+)\/([^/]+)$/.exec(url.pathname);
  if (match !== null) {
    return applySetPage(
      context,
      viewer,
      decodeURIComponent(match[1] ?? ''),
      decodeURIComponent(match[2] ?? ''),
      response,
    );
  }
  return sendHtml(response, 404, renderMessagePage('Not found', 'There is no such page.'));
}

async function signInRoute(request: IncomingMessage, response: ServerResponse, path: string, method: string) {
  if (path === '/sign-out' && method === 'POST') {
    return redirect(response, '/sign-in', { 'Set-Cookie': tokenCookie(UI_TOKEN_COOKIE, '', request, 0) });
  }
  if (path === '/sign-in' && method === 'POST') {
    const token = (await readForm(request))?.get('token')?.trim() ?? '';
    if (token === '' || /[\s;,]/.test(token)) {
      return sendHtml(
        response,
        400,
        renderMessagePage('Sign in', 'That is not a bearer token.', signInForm()),
      );
    }
    return redirect(response, '/', { 'Set-Cookie': tokenCookie(UI_TOKEN_COOKIE, token, request) });
  }
  if (path === '/sign-in' && (method === 'GET' || method === 'HEAD')) {
    return sendHtml(
      response,
      200,
      renderMessagePage('Sign in', 'The view shows what your token may read.', signInForm()),
    );
  }
  return sendHtml(response, 405, renderMessagePage('Not allowed', 'Not on this page.'));
}

/**
 * The ApplySets the viewer may get: each namespace is asked once, and only in a namespace refused are
 * its ApplySets asked about by name, so one who may get a few ApplySets (a Role with resourceNames)
 * sees those, while one who may read a namespace costs no review per ApplySet in it.
 */
async function readable(viewer: UiViewer, applySets: readonly ApplySet[]): Promise<ApplySet[]> {
  const namespaces = [...new Set(applySets.map((applySet) => applySet.metadata.namespace))];
  const refused = new Set<string>();
  await Promise.all(
    namespaces.map(async (namespace) => {
      if (!(await viewer.mayRead(namespace))) refused.add(namespace);
    }),
  );
  const named = new Set(
    await readableByName(
      viewer,
      applySets.filter((applySet) => refused.has(applySet.metadata.namespace)),
    ),
  );
  return applySets.filter((applySet) => !refused.has(applySet.metadata.namespace) || named.has(applySet));
}

/** The ApplySets the viewer may get, each asked by its name (reviews kept per namespace answer most). */
async function readableByName(viewer: UiViewer, applySets: readonly ApplySet[]): Promise<ApplySet[]> {
  const allowed = await Promise.all(
    applySets.map((applySet) => viewer.mayRead(applySet.metadata.namespace, applySet.metadata.name)),
  );
  return applySets.filter((_, index) => allowed[index] === true);
}

function keyOf(applySet: ApplySet): string {
  return `${applySet.metadata.namespace}/${applySet.metadata.name}`;
}

async function fleetPage(context: RouteContext, viewer: UiViewer, url: URL, response: ServerResponse) {
  const applySets = await readable(viewer, context.data.applySets());
  const rows = applySets
    .map(fleetRow)
    .sort((a, b) =>
      a.namespace === b.namespace ? (a.name < b.name ? -1 : 1) : a.namespace < b.namespace ? -1 : 1,
    );
  const filter: FleetFilter = {
    namespace: url.searchParams.get('namespace')?.trim() ?? '',
    label: url.searchParams.get('label')?.trim() ?? '',
    state: url.searchParams.get('state')?.trim() ?? '',
  };
  const all = url.searchParams.get('all') === '1';
  const body = renderFleetBody({
    rows,
    filter,
    nowMs: context.now(),
    limit: context.fleetRowLimit ?? 100,
    all,
    problem: context.data.problem?.(),
  });
  sendHtml(
    response,
    200,
    renderPage({
      title: 'ApplySets',
      viewerName: viewer.name,
      signOut: context.signIn === true,
      watch: '*',
      body,
    }),
  );
}

async function applySetPage(
  context: RouteContext,
  viewer: UiViewer,
  namespace: string,
  name: string,
  response: ServerResponse,
) {
  const applySet = context.data.applySet(namespace, name);
  // Not readable and not there look the same: the page does not tell which namespaces hold what.
  if (applySet === undefined || !(await viewer.mayRead(namespace, name))) {
    return sendHtml(
      response,
      404,
      renderMessagePage('Not found', `No ApplySet ${namespace}/${name} that you may read.`),
    );
  }
  const limit = context.objectReadLimit ?? 200;
  const dependencyKeys = dependencyKeysOf(applySet);
  const self = `${namespace}/${name}`;
  // Only the ApplySets the page shows are reviewed, each by name: its dependencies and dependents,
  // found in the fleet without asking anything, never every namespace of the fleet.
  const shown = context.data
    .applySets()
    .filter((set) => dependencyKeys.includes(keyOf(set)) || dependencyKeysOf(set).includes(self));
  const visible = await readableByName(viewer, shown);
  const byKey = new Map(visible.map((set) => [keyOf(set), set]));
  const logClient = context.data.hookLogClientFor?.(applySet) ?? 'this view does not read logs';
  const [objects, preview, hookLogs] = await Promise.all([
    readObjectStates(applySet, context.data.readerFor(applySet), limit, context.healthCheckExprs),
    context.preview(applySet),
    readHookJobLogs(failedHookJobs(applySet), logClient),
  ]);
  const body = renderApplySetBody({
    applySet,
    objects,
    totalObjects: inventoryRefs(applySet).total,
    events: context.data.events(namespace, name).slice(0, 30),
    dependencies: dependencyKeys.map((key) => ({ key, applySet: byKey.get(key) })),
    dependents: visible.filter((set) => dependencyKeysOf(set).includes(self)),
    preview,
    hookLogs,
    nowMs: context.now(),
  });
  sendHtml(
    response,
    200,
    renderPage({ title: self, viewerName: viewer.name, signOut: context.signIn === true, watch: self, body }),
  );
}

import { once } from 'node:events';
import { IncomingMessage, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import type { ApplySet } from '../../src/api/applyset-types.js';
import { createKubeClient, type KubeClient } from '../../src/kube/kube-client.js';
import { createKubeCredentials } from '../../src/kube/kube-credentials.js';
import { clusterUiAccess, UiReviewUnavailableError } from '../../src/ui/cluster-access.js';
import { createUiServer } from '../../src/ui/create-ui-server.js';
import { UI_TOKEN_COOKIE, type UiAccessDecision, type UiViewer } from '../../src/ui/ui-access.js';
import { waitFor } from '../e2e/wait-for.js';
import { adminKubeConfig, kubeconfigForServiceAccount, uniqueName } from '../harness/test-cluster.js';
import { createUiTenants, reviewerAccount, serviceAccountToken, type UiTenants } from './ui-tenants.js';

/** A request as the web view's server receives it, with only these headers. */
function requestWith(headers: IncomingHttpHeaders): IncomingMessage {
  const request = new IncomingMessage(new Socket());
  request.headers = headers;
  return request;
}

function clientFor(kubeconfig: string, sent: string[] = []): KubeClient {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return createKubeClient({
    credentials: createKubeCredentials(kc),
    onRequest: (_m, path) => sent.push(path),
  });
}

function viewerOf(decision: UiAccessDecision): UiViewer {
  if (decision.kind !== 'viewer') throw new Error(`refused: ${decision.status} ${decision.message}`);
  return decision.viewer;
}

describe('the web view in the cluster: who may see what, asked of the API server', () => {
  let tenants: UiTenants;
  let reviewer: Awaited<ReturnType<typeof reviewerAccount>>;

  beforeAll(async () => {
    tenants = await createUiTenants();
    reviewer = await reviewerAccount(tenants.teamB);
  });
  afterAll(async () => {
    await reviewer?.cleanup();
  });

  it('shows a viewer the namespaces RBAC lets it get ApplySets in, and not the others, from the header or the sign-in cookie', async () => {
    const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig) });
    for (const headers of [
      { authorization: `Bearer ${tenants.viewerToken}` },
      { cookie: `lang=en; ${UI_TOKEN_COOKIE}=${tenants.viewerToken}` },
    ]) {
      const viewer = viewerOf(await access(requestWith(headers)));
      expect(viewer.name).toBe(tenants.viewerUser);
      expect(await viewer.mayRead(tenants.teamA)).toBe(true);
      expect(await viewer.mayRead(tenants.teamB)).toBe(false);
      expect(await viewer.mayRead('default')).toBe(false);
    }
  });

  it('shows one who may get a single ApplySet (resourceNames) its page, reviewing only what the page shows', async () => {
    const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    const namespace = tenants.teamA;
    const rules = [
      { apiGroups: ['applyset.dev'], resources: ['applysets'], resourceNames: ['shop'], verbs: ['get'] },
    ];
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'only-shop' }, rules } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'only-shop' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'only-shop' },
        subjects: [{ kind: 'ServiceAccount', name: 'only-shop', namespace }],
      },
    });
    const token = await serviceAccountToken(namespace, 'only-shop');
    const sent: string[] = [];
    const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig, sent) });
    const viewer = viewerOf(await access(requestWith({ authorization: `Bearer ${token}` })));
    expect(await viewer.mayRead(namespace)).toBe(false);
    expect(await viewer.mayRead(namespace, 'shop')).toBe(true);
    expect(await viewer.mayRead(namespace, 'other')).toBe(false);

    // Its page, in a fleet of 40 namespaces: shop and the one ApplySet that depends on it are reviewed.
    const set = (ns: string, name: string, dependsOn: string[] = []): ApplySet => ({
      apiVersion: 'applyset.dev/v1alpha1',
      kind: 'ApplySet',
      metadata: { namespace: ns, name },
      spec: {
        source: { url: 'https://git.example/r.git', ref: { branch: 'main' } },
        prune: true,
        dependsOn: dependsOn.map((dependency) => ({ name: dependency })),
      },
    });
    const fleet = [
      set(namespace, 'shop'),
      set(namespace, 'other', ['shop']),
      ...Array.from({ length: 40 }, (_, i) => set(`fleet-${i}`, 'app')),
    ];
    const pageSent: string[] = [];
    const ui = createUiServer({
      access: clusterUiAccess({ client: clientFor(reviewer.kubeconfig, pageSent) }),
      data: {
        applySets: () => fleet,
        applySet: (ns, name) => fleet.find((s) => s.metadata.namespace === ns && s.metadata.name === name),
        events: () => [],
        subscribe: () => () => undefined,
        readerFor: () => () => Promise.resolve(undefined),
      },
    });
    ui.server.listen(0, '127.0.0.1');
    await once(ui.server, 'listening');
    try {
      const { port } = ui.server.address() as AddressInfo;
      const page = (path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const shop = await page(`/applysets/${namespace}/shop`);
      expect(shop.status).toBe(200);
      expect(await shop.text()).not.toContain(`/applysets/${namespace}/other`);
      // Everywhere, the namespace, shop and other by name: four reviews, none of the fleet's 40 others.
      expect(pageSent.filter((path) => path.endsWith('/subjectaccessreviews'))).toHaveLength(4);
      expect((await page(`/applysets/${namespace}/other`)).status).toBe(404);
    } finally {
      ui.server.closeAllConnections();
      await new Promise((resolve) => ui.server.close(resolve));
    }
  });

  it('shows one who may get only named ApplySets exactly those in the fleet and its live updates, reviewing names only where the namespace is refused', async () => {
    const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    const { teamA, teamB } = tenants;
    // `picker` of team-b may get cart in team-b and shop in team-a, by name, and nothing else.
    for (const [namespace, name] of [
      [teamA, 'shop'],
      [teamB, 'cart'],
    ] as const) {
      const rules = [
        { apiGroups: ['applyset.dev'], resources: ['applysets'], resourceNames: [name], verbs: ['get'] },
      ];
      await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'picker' }, rules } });
      await rbac.createNamespacedRoleBinding({
        namespace,
        body: {
          metadata: { name: 'picker' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'picker' },
          subjects: [{ kind: 'ServiceAccount', name: 'picker', namespace: teamB }],
        },
      });
    }
    const token = await serviceAccountToken(teamB, 'picker');
    const set = (namespace: string, name: string): ApplySet => ({
      apiVersion: 'applyset.dev/v1alpha1',
      kind: 'ApplySet',
      metadata: { namespace, name },
      spec: { source: { url: 'https://git.example/r.git', ref: { branch: 'main' } }, prune: true },
    });
    const fleet = [
      set(teamA, 'shop'),
      set(teamA, 'other'),
      set(teamB, 'cart'),
      set(teamB, 'basket'),
      ...Array.from({ length: 30 }, (_, i) => set(`fleet-${i}`, 'app')),
    ];
    const shown = [`${teamA}/shop`, `${teamB}/cart`];
    const sent: string[] = [];
    const reviews = () => sent.filter((path) => path.endsWith('/subjectaccessreviews')).length;
    let tell: ((change: { namespace: string; name: string }) => void) | undefined;
    const ui = createUiServer({
      // A fixed clock: what the first page reviewed is still fresh for the second and the stream.
      access: clusterUiAccess({ client: clientFor(reviewer.kubeconfig, sent), now: () => 0 }),
      data: {
        applySets: () => fleet,
        applySet: (ns, name) => fleet.find((s) => s.metadata.namespace === ns && s.metadata.name === name),
        events: () => [],
        subscribe: (listener) => {
          tell = listener;
          return () => undefined;
        },
        readerFor: () => () => Promise.resolve(undefined),
      },
    });
    ui.server.listen(0, '127.0.0.1');
    await once(ui.server, 'listening');
    try {
      const { port } = ui.server.address() as AddressInfo;
      const get = (path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const linked = (page: string) =>
        fleet
          .map((s) => `${s.metadata.namespace}/${s.metadata.name}`)
          .filter((key) => page.includes(`href="/applysets/${key}"`));
      const first = await get('/');
      expect(first.status).toBe(200);
      expect(linked(await first.text())).toEqual(shown);
      // Everywhere, each of the 32 namespaces, then each ApplySet of those refused by name: 1 + 32 + 34.
      expect(reviews()).toBe(67);
      // A second page while the answers are fresh asks nothing: no review per ApplySet per request.
      expect(linked(await (await get('/')).text())).toEqual(shown);
      expect(reviews()).toBe(67);

      // The live stream carries the changes of shop and cart, and of no other ApplySet.
      const stream = await get('/updates');
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      const readUntil = async (count: number) => {
        while ((text.match(/event: change/g) ?? []).length < count) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended after: ${text}`);
          text += Buffer.from(value).toString('utf8');
        }
      };
      for (const s of [...fleet].reverse())
        tell?.({ namespace: s.metadata.namespace, name: s.metadata.name });
      // Every answer is kept, so all were decided before this: a last change marks the stream's end.
      await new Promise((resolve) => setImmediate(resolve));
      tell?.({ namespace: teamA, name: 'shop' });
      await readUntil(3);
      await reader.cancel();
      const told = [...text.matchAll(/data: (.*)/g)].map((m) => {
        const change = JSON.parse(m[1] ?? '{}') as { namespace: string; name: string };
        return `${change.namespace}/${change.name}`;
      });
      expect([...told.slice(0, 2)].sort()).toEqual(shown);
      expect(told[2]).toBe(`${teamA}/shop`);
      expect(reviews()).toBe(67);
    } finally {
      ui.closeUpdates();
      ui.server.closeAllConnections();
      await new Promise((resolve) => ui.server.close(resolve));
    }
  });

  it('refuses a request without a token, with a token the cluster does not know, and a stranger sees nothing', async () => {
    const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig) });
    expect(await access(requestWith({}))).toMatchObject({ kind: 'refused', status: 401 });
    expect(await access(requestWith({ authorization: 'Bearer not-a-token' }))).toMatchObject({
      kind: 'refused',
      status: 401,
    });
    // A service account token the cluster signed, with one character of its signature changed.
    const at = tenants.viewerToken.length - 20;
    const changed = tenants.viewerToken[at] === 'A' ? 'B' : 'A';
    const forged = `${tenants.viewerToken.slice(0, at)}${changed}${tenants.viewerToken.slice(at + 1)}`;
    expect(await access(requestWith({ authorization: `Bearer ${forged}` }))).toMatchObject({ status: 401 });
    const stranger = viewerOf(
      await access(requestWith({ authorization: `Bearer ${tenants.strangerToken}` })),
    );
    expect([await stranger.mayRead(tenants.teamA), await stranger.mayRead(tenants.teamB)]).toEqual([
      false,
      false,
    ]);
  });

  it('asks the API server once per token and namespace while its answer is fresh, and again after', async () => {
    let clock = 0;
    const sent: string[] = [];
    const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig, sent), now: () => clock });
    const request = () => access(requestWith({ authorization: `Bearer ${tenants.viewerToken}` }));
    for (let i = 0; i < 20; i += 1) expect(await viewerOf(await request()).mayRead(tenants.teamA)).toBe(true);
    const reviews = (kind: string) => sent.filter((path) => path.endsWith(`/${kind}`)).length;
    // The token once; every namespace once (a no), then team-a.
    expect([reviews('tokenreviews'), reviews('subjectaccessreviews')]).toEqual([1, 2]);
    clock = 10_000;
    await viewerOf(await request()).mayRead(tenants.teamA);
    expect([reviews('tokenreviews'), reviews('subjectaccessreviews')]).toEqual([2, 4]);
  });

  it('answers one who may read ApplySets everywhere with one review, however many namespaces', async () => {
    const name = uniqueName('ui-auditor');
    const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    const rules = [
      { apiGroups: ['applyset.dev'], resources: ['applysets'], verbs: ['get', 'list', 'watch'] },
    ];
    await rbac.createClusterRole({ body: { metadata: { name }, rules } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name: 'auditor', namespace: tenants.teamB }],
      },
    });
    try {
      const sent: string[] = [];
      const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig, sent) });
      const token = await serviceAccountToken(tenants.teamB, 'auditor');
      const auditor = viewerOf(await access(requestWith({ authorization: `Bearer ${token}` })));
      const namespaces = Array.from({ length: 50 }, (_, i) => `fleet-${i}`);
      expect(await Promise.all(namespaces.map((namespace) => auditor.mayRead(namespace)))).toEqual(
        namespaces.map(() => true),
      );
      expect(sent.filter((path) => path.endsWith('/subjectaccessreviews'))).toHaveLength(1);
    } finally {
      await rbac.deleteClusterRoleBinding({ name });
      await rbac.deleteClusterRole({ name });
    }
  });

  it('takes a revoked RoleBinding into account once the kept answer is older than its TTL', async () => {
    let clock = 0;
    const access = clusterUiAccess({ client: clientFor(reviewer.kubeconfig), now: () => clock });
    const viewer = viewerOf(await access(requestWith({ authorization: `Bearer ${tenants.viewerToken}` })));
    expect(await viewer.mayRead(tenants.teamA)).toBe(true);
    const rbac = adminKubeConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.deleteNamespacedRoleBinding({ namespace: tenants.teamA, name: 'viewer' });
    // Within the TTL, the kept answer stands; the same viewer (a live stream's) asks again after it.
    expect(await viewer.mayRead(tenants.teamA)).toBe(true);
    await waitFor('the revoked binding to count', async () => {
      clock += 10_000;
      return (await viewer.mayRead(tenants.teamA)) ? undefined : true;
    });
    await rbac.createNamespacedRoleBinding({
      namespace: tenants.teamA,
      body: {
        metadata: { name: 'viewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'viewer' },
        subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: tenants.teamA }],
      },
    });
  });

  it('lets nobody in when the controller may not create reviews: the view answers 503', async () => {
    const rightless = await kubeconfigForServiceAccount(tenants.teamB, 'no-reviews');
    const access = clusterUiAccess({ client: clientFor(rightless) });
    const refused = access(requestWith({ authorization: `Bearer ${tenants.viewerToken}` }));
    await expect(refused).rejects.toBeInstanceOf(UiReviewUnavailableError);
    await expect(refused).rejects.toMatchObject({ httpStatus: 503 });
    await expect(refused).rejects.not.toThrow(tenants.viewerToken);
    // The web view's server answers it 503, naming neither the token nor the controller's account.
    const warnings: object[] = [];
    const ui = createUiServer({
      access: clusterUiAccess({ client: clientFor(rightless), logger: { warn: (o) => warnings.push(o) } }),
      data: {
        applySets: () => [],
        applySet: () => undefined,
        events: () => [],
        subscribe: () => () => undefined,
        readerFor: () => () => Promise.resolve(undefined),
      },
      signIn: true,
    });
    ui.server.listen(0, '127.0.0.1');
    await once(ui.server, 'listening');
    try {
      const { port } = ui.server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/`, {
        headers: { authorization: `Bearer ${tenants.viewerToken}` },
      });
      expect(answer.status).toBe(503);
      const page = await answer.text();
      expect(page).not.toContain(tenants.viewerToken);
      expect(page).not.toContain('no-reviews');
      // The cause is the controller's to read, in its log.
      expect(JSON.stringify(warnings.map((w) => String((w as { err?: unknown }).err)))).toContain('403');
    } finally {
      ui.closeUpdates();
      ui.server.closeAllConnections();
      await new Promise((resolve) => ui.server.close(resolve));
    }
  });
});

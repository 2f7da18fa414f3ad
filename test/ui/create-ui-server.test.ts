import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import type { ApplySet } from '../../src/api/applyset-types.js';
import { createUiServer, type UiServer } from '../../src/ui/create-ui-server.js';
import { localUiAccess } from '../../src/ui/local-ui-access.js';
import type { UiAccess } from '../../src/ui/ui-access.js';
import type { UiChange, UiData } from '../../src/ui/ui-data.js';

// The server over data held in memory and an access function of the test's: what a viewer may see,
// refusals, the sign-in cookie, and the headers every page carries.

const applySet = (
  namespace: string,
  name: string,
  message = 'Applied revision: main@sha1:abc',
): ApplySet => ({
  apiVersion: 'applyset.dev/v1alpha1',
  kind: 'ApplySet',
  metadata: { namespace, name },
  spec: { source: { url: 'https://git.example/repo.git', ref: { branch: 'main' } }, prune: true },
  status: {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'ReconciliationSucceeded',
        message,
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
    inventory: {
      items: [`${namespace}_cfg_ConfigMap`.replace('_cfg_', '_cfg__')],
      totalCount: 1,
      truncated: false,
    },
  },
});

function memoryData(sets: ApplySet[]): UiData & { emit(change: UiChange): void } {
  const listeners = new Set<(change: UiChange) => void>();
  return {
    applySets: () => sets,
    applySet: (namespace, name) =>
      sets.find((set) => set.metadata.namespace === namespace && set.metadata.name === name),
    events: () => [],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    readerFor: () => () =>
      Promise.resolve({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' } }),
    emit: (change) => listeners.forEach((listener) => listener(change)),
  };
}

/** Reads only namespace `mine`; no token is a 401, the token `banned` a 403. */
const access: UiAccess = (incoming) => {
  const auth = incoming.headers.authorization;
  if (auth === undefined) return Promise.resolve({ kind: 'refused', status: 401, message: 'sign in first' });
  if (auth === 'Bearer banned') return Promise.resolve({ kind: 'refused', status: 403, message: 'not you' });
  return Promise.resolve({
    kind: 'viewer',
    viewer: { name: 'ann', mayRead: (namespace) => Promise.resolve(namespace === 'mine') },
  });
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let servers: UiServer[] = [];

async function serve(data: UiData, signIn = false, viewerAccess: UiAccess = access): Promise<string> {
  const ui = createUiServer({ access: viewerAccess, data, signIn });
  servers.push(ui);
  ui.server.listen(0, '127.0.0.1');
  await once(ui.server, 'listening');
  return `http://127.0.0.1:${(ui.server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const ui of servers) {
    ui.closeUpdates();
    ui.server.closeAllConnections();
    await new Promise((resolve) => ui.server.close(resolve));
  }
  servers = [];
});

function fetchText(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {} },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

const ann = { authorization: 'Bearer ann' };

describe('the web view server', () => {
  it('shows a viewer only the namespaces they may read, and a set elsewhere as not found', async () => {
    const url = await serve(memoryData([applySet('mine', 'shop'), applySet('theirs', 'bank')]));
    const fleet = await fetchText(`${url}/`, { headers: ann });
    expect(fleet.status).toBe(200);
    expect(fleet.body).toContain('/applysets/mine/shop');
    expect(fleet.body).not.toContain('bank');
    expect(fleet.body).not.toContain('theirs');
    const hidden = await fetchText(`${url}/applysets/theirs/bank`, { headers: ann });
    const missing = await fetchText(`${url}/applysets/mine/nothing`, { headers: ann });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body.replace('theirs/bank', 'X')).toBe(missing.body.replace('mine/nothing', 'X'));
    expect((await fetchText(`${url}/applysets/mine/shop`, { headers: ann })).body).toContain('Current');
  });

  it('reviews only the ApplySets a page shows, each by name, and shows one to a viewer who may get only it', async () => {
    const dependsOn = (set: ApplySet, ...names: string[]): ApplySet => ({
      ...set,
      spec: { ...set.spec, dependsOn: names.map((name) => ({ name, namespace: 'mine' })) },
    });
    // A fleet of 50 namespaces; the page shows mine/shop, the mine/db it waits for and the two that wait for it.
    const fleet = [
      dependsOn(applySet('mine', 'shop'), 'db'),
      applySet('mine', 'db'),
      dependsOn(applySet('mine', 'web'), 'shop'),
      dependsOn(applySet('theirs', 'bank'), 'shop'),
      ...Array.from({ length: 50 }, (_, i) => applySet(`fleet-${i}`, 'app')),
    ];
    const asked: string[] = [];
    // The rights of a Role with resourceNames: [shop, web], in namespace mine.
    const onlyShop: UiAccess = () =>
      Promise.resolve({
        kind: 'viewer',
        viewer: {
          name: 'bob',
          mayRead: (namespace, name) => {
            asked.push(name === undefined ? namespace : `${namespace}/${name}`);
            return Promise.resolve(namespace === 'mine' && (name === 'shop' || name === 'web'));
          },
        },
      });
    const url = await serve(memoryData(fleet), false, onlyShop);
    const page = await fetchText(`${url}/applysets/mine/shop`, { headers: ann });
    expect(page.status).toBe(200);
    expect(page.body).toContain('mine/db (not found, or not yours to read)');
    expect(page.body).toContain('/applysets/mine/web');
    expect(page.body).not.toContain('bank');
    expect([...new Set(asked)].sort()).toEqual(['mine/db', 'mine/shop', 'mine/web', 'theirs/bank']);
  });

  it('lists and streams to one who may get a namespace and one named ApplySet exactly those, asking names only where the namespace is refused', async () => {
    const data = memoryData([
      applySet('open', 'a'),
      applySet('open', 'b'),
      applySet('theirs', 'bank'),
      applySet('theirs', 'vault'),
      applySet('closed', 'c'),
    ]);
    const asked: string[] = [];
    // A RoleBinding in namespace open, and a Role with resourceNames: [bank] in theirs.
    const viewer: UiAccess = () =>
      Promise.resolve({
        kind: 'viewer',
        viewer: {
          name: 'cy',
          mayRead: (namespace, name) => {
            asked.push(name === undefined ? namespace : `${namespace}/${name}`);
            return Promise.resolve(namespace === 'open' || (namespace === 'theirs' && name === 'bank'));
          },
        },
      });
    const url = await serve(data, false, viewer);
    const fleet = await fetchText(`${url}/`, { headers: ann });
    const linked = ['open/a', 'open/b', 'theirs/bank', 'theirs/vault', 'closed/c'].filter((key) =>
      fleet.body.includes(`href="/applysets/${key}"`),
    );
    expect(linked).toEqual(['open/a', 'open/b', 'theirs/bank']);
    expect([...asked].sort()).toEqual([
      'closed',
      'closed/c',
      'open',
      'theirs',
      'theirs/bank',
      'theirs/vault',
    ]);

    const received: string[] = [];
    await new Promise<void>((resolve) => {
      request(`${url}/updates`, { headers: ann }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          received.push(chunk);
          resolve();
        });
      }).end();
    });
    for (const name of ['vault', 'bank']) data.emit({ namespace: 'theirs', name });
    data.emit({ namespace: 'closed', name: 'c' });
    data.emit({ namespace: 'open', name: 'a' });
    await waitUntil(() => received.join('').includes('bank') && received.join('').includes('"a"'));
    expect(received.join('')).not.toMatch(/vault|"c"/);
  });

  it('streams to a viewer only the changes of namespaces they may read', async () => {
    const data = memoryData([applySet('mine', 'shop'), applySet('theirs', 'bank')]);
    const url = await serve(data);
    const received: string[] = [];
    const connected = new Promise<void>((resolve) => {
      request(`${url}/updates`, { headers: ann }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          received.push(chunk);
          resolve();
        });
      }).end();
    });
    await connected;
    data.emit({ namespace: 'theirs', name: 'bank' });
    data.emit({ namespace: 'mine', name: 'shop' });
    await waitUntil(() => received.join('').includes('shop'));
    expect(received.join('')).not.toContain('bank');
  });

  it('answers a refusal with its status and message, offering sign-in on a 401 only with signIn', async () => {
    const data = memoryData([applySet('mine', 'shop')]);
    const plain = await serve(data);
    const withForm = await serve(data, true);
    const refused = await fetchText(`${plain}/`);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('sign in first');
    expect(refused.body).not.toContain('action="/sign-in"');
    expect((await fetchText(`${withForm}/`)).body).toContain('action="/sign-in"');
    const forbidden = await fetchText(`${withForm}/`, { headers: { authorization: 'Bearer banned' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).not.toContain('action="/sign-in"');
    expect((await fetchText(`${plain}/sign-in`)).status).toBe(401);
  });

  it('keeps a signed-in token in an HttpOnly, SameSite=Strict cookie, Secure behind https', async () => {
    const url = await serve(memoryData([]), true);
    // What a browser sends with the view's own sign-in form.
    const form = { 'content-type': 'application/x-www-form-urlencoded', origin: url };
    const plain = await fetchText(`${url}/sign-in`, { method: 'POST', headers: form, body: 'token=abc.def' });
    expect(plain.status).toBe(303);
    expect(plain.headers['set-cookie']).toEqual([
      'applyset-ui-token=abc.def; HttpOnly; SameSite=Strict; Path=/',
    ]);
    const proxied = await fetchText(`${url}/sign-in`, {
      method: 'POST',
      headers: { ...form, 'x-forwarded-proto': 'https' },
      body: 'token=abc.def',
    });
    expect(proxied.headers['set-cookie']).toEqual([
      'applyset-ui-token=abc.def; HttpOnly; SameSite=Strict; Path=/; Secure',
    ]);
    const out = await fetchText(`${url}/sign-out`, { method: 'POST', headers: { origin: url } });
    expect(out.headers['set-cookie']).toEqual([
      'applyset-ui-token=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0',
    ]);
  });

  // Issue #33: a page of another origin posted the sign-in form with the attacker's token, and the
  // view set the victim's cookie to it (login CSRF); sign-out likewise.
  it('refuses a sign-in or sign-out posted from another origin, and sets no cookie', async () => {
    const url = await serve(memoryData([]), true);
    const { port } = new URL(url);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      // Same site, another port: SameSite=Strict does not tell them apart, the origin does.
      { origin: `http://127.0.0.1:${Number(port) + 1}`, 'sec-fetch-site': 'same-site' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      {},
    ];
    for (const headers of attempts) {
      for (const path of ['/sign-in', '/sign-out']) {
        const answer = await fetchText(`${url}${path}`, {
          method: 'POST',
          headers: { ...form, ...headers },
          body: 'token=attacker.token',
        });
        expect([path, headers, answer.status]).toEqual([path, headers, 403]);
        expect(answer.headers['set-cookie']).toBeUndefined();
        expect(answer.body).toContain('Refused');
      }
    }
    // The view's own form, as the browser sends it, and behind a proxy that names the public host.
    const ours: Record<string, string>[] = [
      { origin: url, 'sec-fetch-site': 'same-origin' },
      { origin: 'https://view.example', 'x-forwarded-host': 'view.example' },
    ];
    for (const headers of ours) {
      const answer = await fetchText(`${url}/sign-in`, {
        method: 'POST',
        headers: { ...form, ...headers },
        body: 'token=abc.def',
      });
      expect(answer.status).toBe(303);
    }
  });

  it('refuses a POST from another origin in the local view too, before anything else', async () => {
    const url = await serve(memoryData([applySet('mine', 'shop')]), false, localUiAccess('me'));
    const answer = await fetchText(`${url}/`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('another site');
  });

  it('says why the fleet is empty when the ApplySets cannot be listed', async () => {
    const data = { ...memoryData([]), problem: () => 'the server could not find the requested resource' };
    const page = await fetchText(`${await serve(data)}/`, { headers: ann });
    expect(page.body).toContain(
      'The ApplySets cannot be listed: the server could not find the requested resource',
    );
  });

  it('escapes what the cluster says and allows no inline script or style', async () => {
    const hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';
    const url = await serve(memoryData([applySet('mine', 'shop', hostile)]));
    for (const path of ['/', '/applysets/mine/shop']) {
      const page = await fetchText(`${url}${path}`, { headers: ann });
      const policy = String(page.headers['content-security-policy']);
      expect(policy).toContain("script-src 'self'");
      expect(policy).not.toContain('unsafe-inline');
      expect(page.body).toContain(
        '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;',
      );
      expect(page.body).not.toContain('<img');
      expect(page.body.match(/<script[^>]*>/g)).toEqual([
        expect.stringMatching(/^<script src="\/assets\/ui-[0-9a-f]+\.js" defer>$/),
      ]);
      expect(page.body).not.toMatch(/ style=|<style/);
    }
  });
});

async function waitUntil(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

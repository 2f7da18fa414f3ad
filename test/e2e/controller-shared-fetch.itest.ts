import type { GitTestServer } from '../harness/git-server.js';
import { uniqueName } from '../harness/test-cluster.js';
import { startControllerWithRepository, stopControllersAndGit } from './controller-testbed.js';
import {
  cluster,
  configMapData,
  configMapYaml,
  createApplySet,
  patchApplySet,
  waitForAppliedCommit,
} from './e2e-kit.js';

// Issue #39: at 10,000 ApplySets the controller fetched the repository once per new set. With
// --shared-fetch-max-age (off by default), a new set takes a fetch of its source (URL, ref,
// credentials) that another set made that recently; a changed spec and a reconcile asked for still go
// to the server. The window is an hour here so that what the test sees does not depend on how fast a
// loaded machine is.

const SETS = ['first', 'a', 'b', 'c', 'd', 'e'];

/** A directory per set, each with a ConfigMap of its own, at version `v`. */
const filesOf = (v: string) =>
  Object.fromEntries(SETS.map((name) => [`${name}/cm.yaml`, configMapYaml(`app-${name}`, { v })]));

/** Fetches the Git server answered: each starts with the ref advertisement. */
const fetches = (git: GitTestServer) =>
  git.requests.filter((request) => request.method === 'GET' && request.url.includes('/info/refs')).length;

describe('a fetch shared by new ApplySets', () => {
  const c = cluster();
  const namespace = uniqueName('e2e-shared-fetch');
  let git: GitTestServer | undefined;

  beforeAll(async () => {
    ({ git } = await startControllerWithRepository(c, namespace, filesOf('1'), {
      args: ['--shared-fetch-max-age', '1h'],
    }));
  });

  afterAll(() => stopControllersAndGit(git));

  it('is taken by sets created after it, and a requested reconcile asks the server again', async () => {
    const server = git as GitTestServer;
    const options = (name: string) => ({ url: server.url, path: name, interval: '1h' });
    const first = await server.revParse('main');
    await createApplySet(c, namespace, 'first', options('first'));
    await waitForAppliedCommit(c, namespace, 'first', first, 60_000);
    expect(fetches(server)).toBe(1);

    // A new commit, then five new sets: each takes the first set's fetch, so the server hears nothing
    // and they apply the commit it brought.
    const second = await server.writeFiles(filesOf('2'));
    const requestsBefore = server.requests.length;
    const fleet = SETS.slice(1);
    await Promise.all(fleet.map((name) => createApplySet(c, namespace, name, options(name))));
    for (const name of fleet) await waitForAppliedCommit(c, namespace, name, first, 60_000);
    expect(server.requests.length).toBe(requestsBefore);
    expect(await configMapData(c, namespace, 'app-e')).toEqual({ v: '1' });

    // Asked for (what `applyset reconcile` and a push webhook write), the set fetches and gets the new one.
    await patchApplySet(namespace, 'a', {
      metadata: { annotations: { 'applyset.dev/reconcile-requested-at': 'now' } },
    });
    await waitForAppliedCommit(c, namespace, 'a', second, 60_000);
    expect(fetches(server)).toBe(2);
    expect(await configMapData(c, namespace, 'app-a')).toEqual({ v: '2' });

    // A changed spec asks the server too: suspended and resumed, a set applies the branch's head, which
    // is what `applyset diff` showed it would.
    const third = await server.writeFiles(filesOf('3'));
    await patchApplySet(namespace, 'b', { spec: { suspend: true } });
    await patchApplySet(namespace, 'b', { spec: { suspend: false } });
    await waitForAppliedCommit(c, namespace, 'b', third, 60_000);
    expect(fetches(server)).toBe(3);
    expect(await configMapData(c, namespace, 'app-b')).toEqual({ v: '3' });
  });
});

import {
  startSecretChangePoller,
  type SecretChangePoller,
  type SecretReference,
} from '../../src/controller/secret-change-poller.js';

/** Polls `condition` until it holds or the deadline passes: no fixed sleeps. */
async function waitFor(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the Secret change poller', () => {
  const a: SecretReference = { key: 'ns/a', namespace: 'ns', secretName: 'creds' };
  const b: SecretReference = { key: 'ns/b', namespace: 'ns', secretName: 'creds' };
  let stop: AbortController;
  let poller: SecretChangePoller;
  let versions: Map<string, string>;
  let failing: SecretReference[];
  let reads: number;
  let readNames: string[];
  let readers: (string | undefined)[];
  let changed: string[];

  beforeEach(() => {
    stop = new AbortController();
    versions = new Map([['ns/creds', '1']]);
    failing = [];
    reads = 0;
    readNames = [];
    readers = [];
    changed = [];
    poller = startSecretChangePoller({
      readVersion: async (namespace, name, _signal, user) => {
        reads += 1;
        readNames.push(name);
        readers.push(user);
        // The API server's answer to an account without get on the Secret.
        if (user === 'system:serviceaccount:ns:no-secrets') throw new Error('secrets "creds" is forbidden');
        return versions.get(`${namespace}/${name}`);
      },
      secretOf: (key) => [a, b].find((reference) => reference.key === key),
      failing: () => failing,
      onChange: (key) => changed.push(key),
      intervalMs: 5,
      signal: stop.signal,
      logger: { debug: () => undefined },
    });
  });

  afterEach(async () => {
    stop.abort();
    await poller.done;
  });

  it('reconciles a failing ApplySet once its Secret changed since the reconcile read it', async () => {
    await poller.beforeReconcile('ns/a', stop.signal);
    failing = [a];
    const before = reads;
    await waitFor(() => reads > before + 2);
    expect(changed).toEqual([]);
    versions.set('ns/creds', '2');
    await waitFor(() => changed.length > 0);
    const readsAtChange = reads;
    await waitFor(() => reads > readsAtChange + 2);
    expect(changed).toEqual(['ns/a']);
  });

  it('sees a Secret created after the reconcile found none, even before the first poll', async () => {
    versions.clear();
    await poller.beforeReconcile('ns/a', stop.signal);
    versions.set('ns/creds', '7');
    failing = [a];
    await waitFor(() => changed.length > 0);
    expect(changed).toEqual(['ns/a']);
  });

  it('reads a shared Secret once per poll and reconciles every failing ApplySet that names it', async () => {
    await poller.beforeReconcile('ns/a', stop.signal);
    await poller.beforeReconcile('ns/b', stop.signal);
    const before = reads;
    failing = [a, b];
    await waitFor(() => reads >= before + 2);
    versions.set('ns/creds', '3');
    await waitFor(() => changed.length >= 2);
    expect(changed.sort()).toEqual(['ns/a', 'ns/b']);
  });

  it('does not poll the Secrets of ApplySets that are not failing', async () => {
    await poller.beforeReconcile('ns/a', stop.signal);
    versions.set('ns/creds', '9');
    versions.set('ns/other', '1');
    readNames = [];
    failing = [{ key: 'ns/c', namespace: 'ns', secretName: 'other' }];
    await waitFor(() => readNames.length >= 3);
    expect(new Set(readNames)).toEqual(new Set(['other']));
    expect(changed).toEqual([]);
  });

  it("reads each Secret as the ApplySet's account, once per account: one that may not get it learns nothing", async () => {
    const asDeployer: SecretReference = { ...a, user: 'system:serviceaccount:ns:deployer' };
    const asNoSecrets: SecretReference = { ...b, user: 'system:serviceaccount:ns:no-secrets' };
    failing = [asDeployer, asNoSecrets];
    await waitFor(() => readers.filter((user) => user === 'system:serviceaccount:ns:deployer').length >= 2);
    versions.set('ns/creds', '4');
    await waitFor(() => changed.length > 0);
    const readsAtChange = reads;
    await waitFor(() => reads > readsAtChange + 4);
    expect(changed).toEqual(['ns/a']);
    expect(new Set(readers)).toEqual(
      new Set(['system:serviceaccount:ns:deployer', 'system:serviceaccount:ns:no-secrets']),
    );
  });
});

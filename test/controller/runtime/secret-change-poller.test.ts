import {
  startSecretChangePoller,
  type SecretChangePoller,
  type SecretReference,
} from '../../../src/controller/runtime/secret-change-poller.js';

/** Polls `condition` until it holds or the deadline passes: no fixed sleeps. */
async function waitFor(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the Secret change poller', () => {
  const creds = { namespace: 'ns', secretName: 'creds' };
  const a: SecretReference = { key: 'ns/a', secrets: [creds] };
  const b: SecretReference = { key: 'ns/b', secrets: [creds] };
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
    await poller.beforeReconcile('ns/a', () => stop.signal);
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

  it.each([
    ['its decryption Secret (the second of two)', ['creds', 'age-key']],
    ['its spec.kubeConfig Secret (the last of three)', ['creds', 'age-key', 'kubeconfig']],
  ])('reconciles an ApplySet when %s changes, the others unchanged', async (_what, names) => {
    const changing = names[names.length - 1] ?? '';
    const all: SecretReference = {
      ...a,
      secrets: names.map((secretName) => ({ namespace: 'ns', secretName })),
    };
    for (const name of names) versions.set(`ns/${name}`, '1');
    failing = [all];
    await waitFor(() => readNames.filter((name) => name === changing).length > 2);
    expect(changed).toEqual([]);
    versions.set(`ns/${changing}`, '2');
    await waitFor(() => changed.length > 0);
    expect(changed).toEqual(['ns/a']);
  });

  it('sees a Secret created after the reconcile found none, even before the first poll', async () => {
    versions.clear();
    await poller.beforeReconcile('ns/a', () => stop.signal);
    versions.set('ns/creds', '7');
    failing = [a];
    await waitFor(() => changed.length > 0);
    expect(changed).toEqual(['ns/a']);
  });

  it('reads a shared Secret once per poll and reconciles every failing ApplySet that names it', async () => {
    await poller.beforeReconcile('ns/a', () => stop.signal);
    await poller.beforeReconcile('ns/b', () => stop.signal);
    const before = reads;
    failing = [a, b];
    await waitFor(() => reads >= before + 2);
    versions.set('ns/creds', '3');
    await waitFor(() => changed.length >= 2);
    expect(changed.sort()).toEqual(['ns/a', 'ns/b']);
  });

  it('does not poll the Secrets of ApplySets that are not failing', async () => {
    await poller.beforeReconcile('ns/a', () => stop.signal);
    versions.set('ns/creds', '9');
    versions.set('ns/other', '1');
    readNames = [];
    failing = [{ key: 'ns/c', secrets: [{ namespace: 'ns', secretName: 'other' }] }];
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

describe('the Secret change poller under many failing ApplySets', () => {
  it('reads at most `concurrency` Secrets at once and `maxPerTick` per poll, each ApplySet in turn', async () => {
    const stop = new AbortController();
    // 10 failing ApplySets, each with a Secret of its own.
    const references: SecretReference[] = Array.from({ length: 10 }, (_, i) => ({
      key: `ns/set-${i}`,
      secrets: [{ namespace: 'ns', secretName: `creds-${i}` }],
    }));
    let polls = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const readsByPoll = new Map<number, string[]>();
    const poller = startSecretChangePoller({
      readVersion: async (_namespace, name) => {
        readsByPoll.set(polls, [...(readsByPoll.get(polls) ?? []), name]);
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        // Answered on a later turn of the event loop, as a GET would be: the others can start meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return '1';
      },
      secretOf: (key) => references.find((reference) => reference.key === key),
      failing: () => {
        polls += 1;
        return references;
      },
      onChange: () => undefined,
      intervalMs: 1,
      concurrency: 2,
      maxPerTick: 3,
      signal: stop.signal,
      logger: { debug: () => undefined },
    });
    try {
      await waitFor(() => polls > 5);
    } finally {
      stop.abort();
      await poller.done;
    }
    expect(mostInFlight).toBe(2);
    // Polls 1 to 4 take 3, 3, 3 and 3 of the ten in turn (the fourth wraps around to the start).
    expect([1, 2, 3, 4].map((poll) => readsByPoll.get(poll))).toEqual([
      ['creds-0', 'creds-1', 'creds-2'],
      ['creds-3', 'creds-4', 'creds-5'],
      ['creds-6', 'creds-7', 'creds-8'],
      ['creds-9', 'creds-0', 'creds-1'],
    ]);
  });
});

import { createLargeFetchGate } from '../../src/git/fetch-limit-guards.js';

// The gate that lets one fetch at a time go past the large-fetch threshold: turns are taken in the order
// fetches first crossed it, one at a time, and a fetch that gives up (or never got large) passes its turn on.

/** Whether `promise` has settled once every pending promise callback has run (a macrotask later). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('createLargeFetchGate', () => {
  const never = new AbortController().signal;

  it('lets one large fetch through at a time, in the order they became large', async () => {
    const gate = createLargeFetchGate(10);
    const [a, b, c] = [gate(never), gate(never), gate(never)];
    const enteredA = a.entered();
    const enteredB = b.entered();
    const enteredC = c.entered();
    expect([await settled(enteredA), await settled(enteredB), await settled(enteredC)]).toEqual([
      true,
      false,
      false,
    ]);
    // Asking again while large costs nothing: the same turn.
    expect(await settled(a.entered())).toBe(true);
    a.leave();
    expect([await settled(enteredB), await settled(enteredC)]).toEqual([true, false]);
    b.leave();
    expect(await settled(enteredC)).toBe(true);
  });

  it('passes the turn on from a fetch that leaves without ever becoming large', async () => {
    const gate = createLargeFetchGate(10);
    const small = gate(never);
    const large = gate(never);
    small.leave();
    expect(await settled(large.entered())).toBe(true);
  });

  it('rejects a waiting fetch whose signal aborts, and its turn passes to the next once it leaves', async () => {
    const gate = createLargeFetchGate(10);
    const first = gate(never);
    const controller = new AbortController();
    const waiting = gate(controller.signal);
    const third = gate(never);
    await first.entered();
    const waited = waiting.entered();
    const enteredThird = third.entered();
    controller.abort(new Error('deadline'));
    await expect(waited).rejects.toThrow('deadline');
    waiting.leave();
    expect(await settled(enteredThird)).toBe(false);
    first.leave();
    expect(await settled(enteredThird)).toBe(true);
  });
});

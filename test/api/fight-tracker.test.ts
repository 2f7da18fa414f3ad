import { countFights, createFightTracker, FIGHT_RUNS } from '../../src/api/fight-tracker.js';

const a = 'ns::ConfigMap:a';
const b = 'ns::ConfigMap:b';

describe('countFights', () => {
  it('makes a fight of three corrections in a row, reported once', () => {
    let streaks = new Map();
    const reported: string[][] = [];
    for (let run = 1; run <= FIGHT_RUNS + 1; run += 1) {
      const verdict = countFights(streaks, [{ object: a, fields: [run % 2 === 0 ? 'data.v' : 'data.w'] }]);
      streaks = new Map(verdict.streaks);
      reported.push(verdict.newlyFighting.map((c) => c.object));
      if (run < FIGHT_RUNS) expect(verdict.fighting).toEqual([]);
    }
    expect(reported).toEqual([[], [], [a], []]);
    expect(countFights(streaks, [{ object: a, fields: [] }]).fighting).toEqual([
      { object: a, fields: ['data.v', 'data.w'] },
    ]);
  });

  it('ends a streak on a run that does not correct the object', () => {
    const one = countFights(new Map(), [
      { object: a, fields: ['x'] },
      { object: b, fields: ['y'] },
    ]);
    const two = countFights(one.streaks, [{ object: a, fields: ['x'] }]);
    expect([...two.streaks.keys()]).toEqual([a]);
    const three = countFights(two.streaks, [
      { object: a, fields: ['x'] },
      { object: b, fields: ['y'] },
    ]);
    expect(three.fighting.map((c) => c.object)).toEqual([a]);
    expect(three.streaks.get(b)?.runs).toBe(1);
  });
});

describe('createFightTracker', () => {
  it('keeps streaks per ApplySet, shows them to runs that do not count, and forgets', () => {
    const tracker = createFightTracker();
    for (let run = 0; run < FIGHT_RUNS; run += 1)
      tracker.observe('ns/x', [{ object: a, fields: ['data.v'] }]);
    tracker.observe('ns/y', [{ object: b, fields: ['data.v'] }]);
    expect(tracker.current('ns/x')).toEqual({
      fighting: [{ object: a, fields: ['data.v'] }],
      newlyFighting: [],
    });
    expect(tracker.current('ns/y').fighting).toEqual([]);
    expect(tracker.observe('ns/x', []).fighting).toEqual([]);
    tracker.forget('ns/y');
    expect(tracker.observe('ns/y', [{ object: b, fields: [] }]).streaks.get(b)?.runs).toBe(1);
  });
});

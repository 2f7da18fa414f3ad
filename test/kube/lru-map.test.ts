import { LruMap } from '../../src/kube/lru-map.js';

describe('LruMap', () => {
  it('drops the least recently used entry past its bound, a get counting as a use', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.has('b')).toBe(false);
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
    expect(map.size).toBe(2);
  });

  it('does not count a peek as a use, and setting a key again keeps one entry', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    expect(map.peek('a')).toBe(1);
    map.set('b', 20).set('c', 3);
    expect(map.has('a')).toBe(false);
    expect([map.get('b'), map.get('c'), map.size]).toEqual([20, 3, 2]);
  });

  it('stays at its bound however many keys pass through it', () => {
    const map = new LruMap<number, number>(100);
    for (let i = 0; i < 10_000; i += 1) map.set(i, i);
    expect(map.size).toBe(100);
    expect(map.has(9_999) && !map.has(9_899)).toBe(true);
  });

  it('refuses a bound below one', () => {
    expect(() => new LruMap(0)).toThrow(RangeError);
  });

  it('drops the least recently used entries while their weights add up to more than the bound', () => {
    const map = new LruMap<string, string>(100, { maxWeight: 10 });
    map.set('a', 'x').set('b', 'y').set('c', 'z');
    map.setWeight('a', 4);
    map.setWeight('b', 4);
    expect(map.get('a')).toBe('x');
    map.setWeight('c', 4);
    // a was used after b: b goes; c, set without a weight, weighed nothing until now.
    expect([map.has('a'), map.has('b'), map.has('c')]).toEqual([true, false, true]);
    map.set('c', 'z2');
    map.setWeight('c', 11);
    // An entry heavier than the whole bound stays alone: the others go.
    expect([map.has('a'), map.get('c'), map.size]).toEqual([false, 'z2', 1]);
  });

  it('weighs each entry by its value with `weigh`, through replacing sets and deletes', () => {
    const map = new LruMap<string, string>(100, { maxWeight: 10, weigh: (value) => value.length });
    map.set('a', 'xxxx').set('b', 'yyyy');
    expect(map.get('a')).toBe('xxxx');
    // 4 + 4 + 4 is past 10: b, used least recently, goes.
    map.set('c', 'zzzz');
    expect([map.has('a'), map.has('b'), map.has('c')]).toEqual([true, false, true]);
    // A replaced value is weighed anew, a deleted one no longer counts: 1 + 4 + 5 fit.
    map.set('a', 'x');
    map.set('d', 'wwwww');
    expect([map.has('a'), map.has('c'), map.has('d')]).toEqual([true, true, true]);
    map.delete('d');
    map.set('e', 'vvvvv');
    expect(map.size).toBe(3);
    expect(() => map.setWeight('a', 1)).toThrow(TypeError);
  });

  it('tells onEvict of each entry the bound drops, not of a delete or a replacing set', () => {
    const evicted: string[] = [];
    const map = new LruMap<string, string>(2, { onEvict: (key, value) => evicted.push(`${key}=${value}`) });
    map.set('a', '1').set('b', '2');
    map.set('a', '1b');
    map.delete('b');
    expect(evicted).toEqual([]);
    map.set('c', '3').set('d', '4');
    expect(evicted).toEqual(['a=1b']);
  });
});

import { ExpiringMemo } from '../../src/ui/expiring-memo.js';

describe('ExpiringMemo', () => {
  it('serves an answer until it is ttlMs old, then asks again', async () => {
    let clock = 0;
    let asked = 0;
    const memo = new ExpiringMemo<number>(10, 1_000, () => clock);
    const compute = () => Promise.resolve(++asked);
    expect(await memo.get('k', compute)).toBe(1);
    clock = 999;
    expect(await memo.get('k', compute)).toBe(1);
    clock = 1_000;
    expect(await memo.get('k', compute)).toBe(2);
  });

  it('shares one request among callers asking at once', async () => {
    let asked = 0;
    let release!: (value: string) => void;
    const memo = new ExpiringMemo<string>(10, 1_000, () => 0);
    const compute = () => {
      asked += 1;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const both = Promise.all([memo.get('k', compute), memo.get('k', compute)]);
    release('yes');
    expect(await both).toEqual(['yes', 'yes']);
    expect(asked).toBe(1);
  });

  it('forgets a failure at once, so the next caller asks again', async () => {
    const memo = new ExpiringMemo<string>(10, 1_000, () => 0);
    await expect(memo.get('k', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await memo.get('k', () => Promise.resolve('up'))).toBe('up');
  });

  it('keeps at most maxEntries answers', async () => {
    const memo = new ExpiringMemo<number>(3, 1_000, () => 0);
    for (let i = 0; i < 100; i += 1) await memo.get(String(i), () => Promise.resolve(i));
    expect(memo.size).toBe(3);
  });
});

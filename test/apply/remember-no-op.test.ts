import { createNoOpMemo, noOpMemoFor } from '../../src/apply/remember-no-op.js';

describe('the memo of patches the server ignored', () => {
  it('knows a patch only at the version and with the body it was remembered with', () => {
    const memo = createNoOpMemo();
    memo.remember('default::Secret:s', '5\napplication/json\n{"stringData":{"a":"b"}}');
    expect(memo.has('default::Secret:s', '5\napplication/json\n{"stringData":{"a":"b"}}')).toBe(true);
    expect(memo.has('default::Secret:s', '6\napplication/json\n{"stringData":{"a":"b"}}')).toBe(false);
    memo.forget('default::Secret:s');
    expect(memo.has('default::Secret:s', '5\napplication/json\n{"stringData":{"a":"b"}}')).toBe(false);
  });

  it('keeps one identity apart from another: what one account may skip, another must send', () => {
    const shared = createNoOpMemo();
    noOpMemoFor(shared, 'system:serviceaccount:a:deployer').remember('k', 'v');
    expect(noOpMemoFor(shared, 'system:serviceaccount:a:deployer').has('k', 'v')).toBe(true);
    expect(noOpMemoFor(shared, 'system:serviceaccount:b:deployer').has('k', 'v')).toBe(false);
  });

  it('holds at most its bound of objects, the least recently used going first', () => {
    const memo = createNoOpMemo(3);
    for (const key of ['a', 'b', 'c']) memo.remember(key, 'v');
    expect(memo.has('a', 'v')).toBe(true);
    memo.remember('d', 'v');
    expect(['a', 'b', 'c', 'd'].map((key) => memo.has(key, 'v'))).toEqual([true, false, true, true]);
  });
});

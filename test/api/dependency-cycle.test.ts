import { findDependencyCycle } from '../../src/api/dependencies.js';

const graph =
  (edges: Record<string, string[]>) =>
  (key: string): readonly string[] =>
    edges[key] ?? [];

describe('findDependencyCycle', () => {
  it('finds an ApplySet that names itself', () => {
    expect(findDependencyCycle('t/a', graph({ 't/a': ['t/a'] }))).toEqual(['t/a', 't/a']);
  });

  it('finds a cycle of two, in order from the start', () => {
    expect(findDependencyCycle('t/a', graph({ 't/a': ['t/b'], 't/b': ['t/a'] }))).toEqual([
      't/a',
      't/b',
      't/a',
    ]);
    expect(findDependencyCycle('t/b', graph({ 't/a': ['t/b'], 't/b': ['t/a'] }))).toEqual([
      't/b',
      't/a',
      't/b',
    ]);
  });

  it('finds a longer cycle, across namespaces, the shortest one through the start', () => {
    const edges = {
      'a/x': ['a/y', 'b/z'],
      'a/y': ['a/w'],
      'a/w': ['b/v'],
      'b/v': ['a/x'],
      'b/z': ['a/x'],
    };
    expect(findDependencyCycle('a/x', graph(edges))).toEqual(['a/x', 'b/z', 'a/x']);
    expect(findDependencyCycle('a/y', graph(edges))).toEqual(['a/y', 'a/w', 'b/v', 'a/x', 'a/y']);
  });

  it('finds nothing in a graph without cycles, shared dependencies included', () => {
    const edges = { 't/app': ['t/db', 't/cache'], 't/cache': ['t/db'], 't/db': [] };
    expect(findDependencyCycle('t/app', graph(edges))).toBeUndefined();
  });

  it('leaves a cycle that does not pass through the start to the ApplySets in it', () => {
    const edges = { 't/app': ['t/a'], 't/a': ['t/b'], 't/b': ['t/a'] };
    expect(findDependencyCycle('t/app', graph(edges))).toBeUndefined();
  });
});

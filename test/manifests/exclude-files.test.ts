import { excludeFiles } from '../../src/manifests/exclude-files.js';

const file = (path: string) => ({ path, text: '' });
const paths = [
  'deploy/app.yaml',
  'deploy/README.md',
  'deploy/setup/crd.yaml',
  'kustomization.yaml',
  'docs/x.yaml',
];

describe('excludeFiles', () => {
  it.each<[string[], string[]]>([
    [[], paths],
    [['*.md'], ['deploy/app.yaml', 'deploy/setup/crd.yaml', 'kustomization.yaml', 'docs/x.yaml']],
    [['/docs/'], ['deploy/app.yaml', 'deploy/README.md', 'deploy/setup/crd.yaml', 'kustomization.yaml']],
    [['setup/'], ['deploy/app.yaml', 'deploy/README.md', 'kustomization.yaml', 'docs/x.yaml']],
    [
      ['*.yaml', '!deploy/app.yaml'],
      ['deploy/app.yaml', 'deploy/README.md'],
    ],
    [
      ['# a comment', '', 'kustomization.yaml'],
      ['deploy/app.yaml', 'deploy/README.md', 'deploy/setup/crd.yaml', 'docs/x.yaml'],
    ],
  ])('with %j keeps %j', (patterns, kept) => {
    expect(excludeFiles(paths.map(file), patterns).kept.map((f) => f.path)).toEqual(kept);
  });

  // spec.source.ignore is a tenant's: a pattern written to make a backtracking matcher try every way of
  // laying a long path across its wildcards must be decided as fast as any other. A backtracking
  // `[^/]*a` x 8 takes seconds on 40 characters; these paths are 250 and 200 deep.
  it.each([
    ['*a'.repeat(12) + '*b'],
    ['**/a'.repeat(10) + '/b'],
    ['[a-z]*'.repeat(12) + 'b'],
    ['?*'.repeat(12) + 'b'],
    ['a*'.repeat(15) + '!'],
  ])('decides the hostile pattern %j on long paths at once', (pattern) => {
    const hostile = ['a'.repeat(250), 'a/'.repeat(100) + 'x.yaml'].map(file);
    const started = process.hrtime.bigint();
    const { kept } = excludeFiles(hostile, [pattern]);
    const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(kept).toHaveLength(2);
    expect(tookMs).toBeLessThan(1000);
  });
});

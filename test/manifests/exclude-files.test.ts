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
});

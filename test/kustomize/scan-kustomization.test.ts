import {
  kustomizationFileIn,
  scanKustomization,
  type KustomizationTree,
} from '../../src/kustomize/scan-kustomization.js';

/** A repository of `files` (path → text); every parent of a file is a directory. */
function treeOf(files: Readonly<Record<string, string>>): KustomizationTree {
  const dirs = new Set<string>(['']);
  for (const file of Object.keys(files)) {
    const parts = file.split('/');
    for (let index = 1; index < parts.length; index += 1) dirs.add(parts.slice(0, index).join('/'));
  }
  return {
    kindOf: (relativePath) => (relativePath in files ? 'file' : dirs.has(relativePath) ? 'dir' : undefined),
    read: (relativePath) => files[relativePath] ?? '',
  };
}

const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';

describe('scanKustomization', () => {
  it('lets through an overlay of local bases, components, patches and generators', () => {
    const tree = treeOf({
      'base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'base/cm.yaml': configMap,
      'components/env/kustomization.yaml': 'kind: Component\npatches: [{path: p.yaml}]\n',
      'components/env/p.yaml': configMap,
      'overlays/prod/kustomization.yml':
        'resources: [../../base]\ncomponents: [../../components/env]\n' +
        'patchesStrategicMerge:\n- |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n' +
        'configMapGenerator:\n- name: g\n  files: [app.properties, key=app.properties]\n  envs: [.env]\n' +
        'replacements: [{path: r.yaml}]\n',
      'overlays/prod/app.properties': 'a=1\n',
      'overlays/prod/.env': 'B=2\n',
      'overlays/prod/r.yaml': 'source: {kind: ConfigMap}\n',
    });
    expect(kustomizationFileIn(tree, 'overlays/prod')).toBe('kustomization.yml');
    expect(scanKustomization(tree, 'overlays/prod')).toEqual([]);
  });

  it.each([
    ['https://github.com/org/repo//deploy?ref=v1', 'is remote'],
    ['github.com/org/repo/deploy?ref=main', 'is remote'],
    ['git@github.com:org/repo.git', 'is remote'],
    ['git::https://example.com/repo.git', 'is remote'],
    ['/etc/kubernetes', 'is an absolute path'],
    ['../../../outside', 'leaves the repository root'],
    ['missing-dir', 'names nothing in the repository'],
  ])('refuses the resource %j, naming the file and the entry', (entry, why) => {
    const tree = treeOf({ 'app/kustomization.yaml': `resources:\n- ${JSON.stringify(entry)}\n` });
    const problems = scanKustomization(tree, 'app');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`app/kustomization.yaml: resources entry ${JSON.stringify(entry)} ${why}`);
  });

  it('finds a remote base several levels down, naming the kustomization that lists it', () => {
    const tree = treeOf({
      'overlays/prod/kustomization.yaml': 'resources: [../../base]\n',
      'base/kustomization.yaml': 'resources: [../common]\n',
      'common/kustomization.yaml': 'components:\n- https://example.com/component.git\n',
    });
    expect(scanKustomization(tree, 'overlays/prod')).toEqual([
      expect.stringContaining(
        'common/kustomization.yaml: components entry "https://example.com/component.git" is remote',
      ),
    ]);
  });

  it('refuses plugin configurations and Helm charts', () => {
    const tree = treeOf({
      Kustomization:
        'generators: [gen.yaml]\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PrefixTransformer\n' +
        'validators: [v.yaml]\nhelmCharts: [{name: redis}]\n',
      'gen.yaml': 'kind: X\n',
      'v.yaml': 'kind: Y\n',
    });
    const problems = scanKustomization(tree, '');
    expect(problems).toEqual([
      expect.stringMatching(/^Kustomization: generators entry "gen.yaml" is a plugin configuration/),
      expect.stringMatching(
        /^Kustomization: transformers entry "apiVersion: builtin" is a plugin configuration/,
      ),
      expect.stringMatching(/^Kustomization: validators entry "v.yaml" is a plugin configuration/),
      expect.stringMatching(/^Kustomization: helmCharts inflates Helm charts/),
    ]);
  });

  it('checks the paths of patches, generators and openapi, and ends on kustomizations that list each other', () => {
    const tree = treeOf({
      'a/kustomization.yaml':
        'resources: [../b]\npatches: [{path: ../../p.yaml}]\nsecretGenerator: [{name: s, env: /root/.env}]\n' +
        'openapi: {path: https://example.com/schema.json}\n',
      'b/kustomization.yaml': 'resources: [../a]\n',
    });
    expect(scanKustomization(tree, 'a')).toEqual([
      expect.stringContaining('patches entry "../../p.yaml" leaves the repository root'),
      expect.stringContaining('openapi entry "https://example.com/schema.json" is remote'),
      expect.stringContaining('secretGenerator envs entry "/root/.env" is an absolute path'),
    ]);
  });

  it('refuses a kustomization it cannot read rather than let it through unchecked', () => {
    const tree = treeOf({ 'kustomization.yaml': 'resources: [a\n' });
    expect(scanKustomization(tree, '')).toEqual([
      expect.stringMatching(/^kustomization.yaml: cannot be read to check it/),
    ]);
  });

  // Issue #33, finding 5: kustomize decodes field names with encoding/json, which matches them
  // case-insensitively (and folds the long s and the Kelvin sign into s and k).
  it.each([
    ['Resources', 'http://127.0.0.1:8080/cm.yaml', 'is remote'],
    ['RESOURCES', '../../../../../../etc', 'leaves the repository root'],
    ['re\u017fources', '/etc/kubernetes', 'is an absolute path'],
    ['Components', 'https://example.com/component.git', 'is remote'],
    ['\u212aind', '', ''],
  ])('checks %j as kustomize reads it', (field, entry, why) => {
    const tree = treeOf({ 'app/kustomization.yaml': `${field}:\n- ${JSON.stringify(entry)}\n` });
    const problems = scanKustomization(tree, 'app');
    if (why === '') return expect(problems).toEqual([]);
    const canonical = field.replace('\u017f', 's').toLowerCase();
    return expect(problems).toEqual([
      expect.stringContaining(`app/kustomization.yaml: ${canonical} entry ${JSON.stringify(entry)} ${why}`),
    ]);
  });

  it('checks the nested fields of patches, generators and openapi in any case', () => {
    const tree = treeOf({
      'a/kustomization.yaml':
        'Patches: [{Path: ../../p.yaml}]\nSecretGenerator: [{name: s, ENV: /root/.env, Files: [k=/etc/shadow]}]\n' +
        'OpenAPI: {PATH: https://example.com/schema.json}\nHelmCharts: [{name: redis}]\nGenerators: [g.yaml]\n',
      'a/g.yaml': 'kind: X\n',
    });
    expect(scanKustomization(tree, 'a')).toEqual([
      expect.stringContaining('patches entry "../../p.yaml" leaves the repository root'),
      expect.stringContaining('openapi entry "https://example.com/schema.json" is remote'),
      expect.stringContaining('secretGenerator files entry "/etc/shadow" is an absolute path'),
      expect.stringContaining('secretGenerator envs entry "/root/.env" is an absolute path'),
      expect.stringContaining('generators entry "g.yaml" is a plugin configuration'),
      expect.stringContaining('helmCharts inflates Helm charts'),
    ]);
  });

  it('refuses a field spelled twice, as no reader can tell which one kustomize keeps', () => {
    const tree = treeOf({
      'kustomization.yaml': 'resources: [cm.yaml]\nResources: [cm.yaml]\n',
      'cm.yaml': configMap,
    });
    expect(scanKustomization(tree, '')).toEqual([
      'kustomization.yaml: "resources" and "Resources" are the same field to kustomize (it matches field names case-insensitively); keep one',
    ]);
  });

  it("refuses a kustomization whose aliases expand past go-yaml's test, before walking it", () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let level = 1; level <= 7; level += 1) {
      levels.push(
        `a${level}: &a${level} [${Array<string>(10)
          .fill(`*a${level - 1}`)
          .join(', ')}]`,
      );
    }
    const tree = treeOf({ 'kustomization.yaml': `${levels.join('\n')}\nresources: *a7\n` });
    expect(scanKustomization(tree, '')).toEqual([
      expect.stringMatching(/^kustomization\.yaml: cannot be read to check it: contains excessive aliasing/),
    ]);
  });

  it('speaks of applyset and absolute paths when the CLI builds a directory on disk', () => {
    const tree = treeOf({
      'home/me/app/kustomization.yaml': 'resources: [https://example.com/x.yaml]\ngenerators: [g.yaml]\n',
      'home/me/app/g.yaml': 'kind: X\n',
    });
    expect(scanKustomization(tree, 'home/me/app', 'cli')).toEqual([
      '/home/me/app/kustomization.yaml: resources entry "https://example.com/x.yaml" is remote (a URL or a Git reference); applyset builds only local files',
      expect.stringMatching(
        /^\/home\/me\/app\/kustomization\.yaml: generators entry "g\.yaml" is a plugin configuration; applyset runs no kustomize plugins/,
      ),
    ]);
  });
});

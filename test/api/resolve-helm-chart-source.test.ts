import { resolveApplySetSpec } from '../../src/api/resolve-applyset-spec.js';

// spec.helm.chart makes spec.source.url the chart's repository: an https:// one is a source of its own
// (kind helm), an oci:// one the OCI artifact <url>/<chart>; either follows spec.helm.version as a
// semver range, so spec.source.ref is refused and the tree is the chart (spec.source.path empty).

const owner = { name: 'web', namespace: 'team-a' };
const resolve = (source: object, helm: object) => resolveApplySetSpec({ source, helm, prune: true }, owner);
const errorsOf = (result: ReturnType<typeof resolve>) => (result.ok ? [] : result.errors);

describe('a chart of a repository', () => {
  it('makes an https:// URL a Helm repository following the highest stable version by default', () => {
    const result = resolve({ url: 'https://charts.example.com/stable' }, { chart: 'web' });
    expect(result.ok && result.spec.source).toMatchObject({
      kind: 'helm',
      url: 'https://charts.example.com/stable',
      ref: { type: 'semver', range: '*' },
      path: '',
      oci: undefined,
    });
    expect(result.ok && result.spec.helm?.chart).toBe('web');
  });

  it('makes an oci:// URL the artifact <url>/<chart>, its tag chosen by spec.helm.version', () => {
    const result = resolve(
      { url: 'oci://registry.example:5000/charts', insecure: true },
      { chart: 'web', version: '~1.2' },
    );
    expect(result.ok && result.spec.source).toMatchObject({
      kind: 'oci',
      url: 'oci://registry.example:5000/charts/web',
      ref: { type: 'semver', range: '~1.2' },
      oci: { insecure: true, verifySecretName: undefined },
    });
  });

  it.each([
    ['a ref', { url: 'https://charts.example.com', ref: { tag: 'v1' } }, { chart: 'web' }, 'spec.source.ref'],
    ['a path', { url: 'https://charts.example.com', path: 'web' }, { chart: 'web' }, 'spec.source.path'],
    [
      'a version that is no range',
      { url: 'https://charts.example.com' },
      { chart: 'web', version: '1.0,2' },
      'spec.helm.version',
    ],
    [
      'a chart name with a slash',
      { url: 'https://charts.example.com' },
      { chart: 'team/web' },
      'spec.helm.chart',
    ],
    [
      'insecure on a Helm repository',
      { url: 'https://charts.example.com', insecure: true },
      { chart: 'web' },
      'spec.source.insecure',
    ],
  ])('refuses %s, naming the field', (_case, source, helm, field) => {
    expect(errorsOf(resolve(source, helm)).map((error) => error.field)).toEqual([field]);
  });

  it('refuses a version without a chart', () => {
    const result = resolve(
      { url: 'https://git.example.com/r.git', ref: { branch: 'main' } },
      { version: '1.x' },
    );
    expect(errorsOf(result)).toEqual([
      { field: 'spec.helm.version', message: 'applies only with spec.helm.chart (a chart of a repository)' },
    ]);
  });

  it('still requires a ref of a Git source without a chart', () => {
    const result = resolve({ url: 'https://git.example.com/r.git' }, {});
    expect(errorsOf(result).map((error) => error.field)).toEqual(['spec.source.ref']);
  });
});

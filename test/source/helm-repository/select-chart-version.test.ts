import {
  chartArchiveUrl,
  indexUrl,
  readHelmIndex,
  selectChartVersion,
} from '../../../src/source/helm-repository/select-chart-version.js';

// A chart's version chosen from index.yaml as `helm pull --version RANGE` chooses: the highest that
// satisfies the range, prereleases only when the range names one; the archive's URL resolved against
// the repository's, as helm resolves a relative one.

const digest = 'ab'.repeat(32);
const index = readHelmIndex(
  {
    apiVersion: 'v1',
    entries: {
      web: [
        { version: '1.2.0', urls: ['web-1.2.0.tgz'], digest },
        { version: '1.10.0', urls: ['https://cdn.example.com/web-1.10.0.tgz', 'mirror/web-1.10.0.tgz'] },
        { version: '2.0.0-rc.1', urls: ['web-2.0.0-rc.1.tgz'] },
        { version: 'latest', urls: ['web-latest.tgz'] },
        { version: '1.9.0' },
        { version: '1.3.0', urls: ['web-1.3.0.tgz'], digest: 'not-a-digest' },
      ],
      api: 'not a list',
    },
  },
  'https://charts.example.com',
);
const where = 'https://charts.example.com';

describe('selectChartVersion', () => {
  it.each([
    ['*', '1.10.0'],
    ['~1.2', '1.2.0'],
    ['>=1.2.0 <1.10.0', '1.3.0'],
    ['>=2.0.0-rc.0', '2.0.0-rc.1'],
  ])('chooses for %s the highest version it matches, %s', (range, version) => {
    expect(selectChartVersion(index, 'web', range, where).version).toBe(version);
  });

  it("keeps the entry's first URL and its digest, as sha256:", () => {
    expect(selectChartVersion(index, 'web', '1.2.0', where)).toEqual({
      version: '1.2.0',
      url: 'web-1.2.0.tgz',
      digest: `sha256:${digest}`,
    });
    expect(selectChartVersion(index, 'web', '*', where).url).toBe('https://cdn.example.com/web-1.10.0.tgz');
    expect(selectChartVersion(index, 'web', '1.3.0', where).digest).toBeUndefined();
  });

  it('names the newest versions seen when none is in the range', () => {
    expect(() => selectChartVersion(index, 'web', '>=3', where)).toThrow(
      expect.objectContaining({
        reason: 'HelmChartVersionNotFound',
        intent: 'stalled',
        message:
          'https://charts.example.com: no version of chart web satisfies spec.helm.version ">=3"; the newest listed: 2.0.0-rc.1, 1.10.0, 1.3.0, 1.2.0; nothing was applied',
      }),
    );
  });

  it('says the chart is not in the index', () => {
    for (const chart of ['db', 'api', 'constructor']) {
      expect(() => selectChartVersion(index, chart, '*', where)).toThrow(
        expect.objectContaining({ reason: 'HelmChartNotFound' }),
      );
    }
  });

  it('refuses what is not an index', () => {
    expect(() => readHelmIndex({ apiVersion: 'v1' }, where)).toThrow(
      expect.objectContaining({ reason: 'HelmRepositoryInvalid' }),
    );
  });
});

describe('chartArchiveUrl', () => {
  it.each([
    ['web-1.0.0.tgz', 'https://h.example/charts', 'https://h.example/charts/web-1.0.0.tgz'],
    ['web-1.0.0.tgz', 'https://h.example/charts/', 'https://h.example/charts/web-1.0.0.tgz'],
    ['../pkg/web.tgz', 'https://h.example/charts/stable', 'https://h.example/charts/pkg/web.tgz'],
    ['/abs/web.tgz', 'https://h.example/charts', 'https://h.example/abs/web.tgz'],
    ['https://cdn.example/web.tgz', 'https://h.example/charts', 'https://cdn.example/web.tgz'],
  ])('resolves %s against %s', (entry, repository, expected) => {
    expect(chartArchiveUrl(entry, repository)?.href).toBe(expected);
  });

  it('refuses a URL that is not http(s)', () => {
    expect(chartArchiveUrl('file:///etc/passwd', 'https://h.example/charts')).toBeUndefined();
  });

  it('finds the index beside the charts', () => {
    expect(indexUrl('https://h.example/charts').href).toBe('https://h.example/charts/index.yaml');
  });
});

import { PassThrough } from 'node:stream';
import { applyFlagSpecs, parseApplySetFlags, type ApplySetFlags } from '../../src/cli/apply-set-flags.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { ExitCode } from '../../src/cli/exit-codes.js';

function parse(argv: readonly string[]): { flags: ApplySetFlags | number; stderr: string } {
  let stderr = '';
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const io: CliIo = { stdout: new PassThrough(), stderr: err, env: {}, cwd: '/' };
  const flags = parseApplySetFlags(argv, io, {
    command: 'apply',
    specs: applyFlagSpecs,
    usage: 'usage\n',
    pruneByDefault: false,
  });
  return { flags, stderr };
}

describe('apply --helm-chart', () => {
  it('takes the chart, values files and --set in order, the release named by the set', () => {
    const { flags } = parse([
      '--helm-chart',
      'charts/web',
      '--values',
      'a.yaml',
      '--set',
      'x=1',
      '--values',
      'b.yaml',
      '--set',
      'y.z=two',
      '--applyset',
      'web',
    ]);
    expect(flags).toMatchObject({
      helm: {
        chart: 'charts/web',
        valuesFiles: ['a.yaml', 'b.yaml'],
        set: ['x=1', 'y.z=two'],
        releaseName: undefined,
        includeCRDs: true,
        skipTests: true,
      },
    });
  });

  it('takes --release-name, --include-crds=false and --skip-tests=false', () => {
    const { flags } = parse([
      '--helm-chart',
      'c',
      '--release-name',
      'r1',
      '--include-crds=false',
      '--skip-tests=false',
      '--applyset',
      'S_not_a_release',
    ]);
    expect(flags).toMatchObject({ helm: { releaseName: 'r1', includeCRDs: false, skipTests: false } });
  });

  it('takes --repo, --version and --plain-http for a chart to fetch', () => {
    expect(
      parse([
        '--helm-chart',
        'web',
        '--repo',
        'https://charts.example/x/',
        '--version',
        '^1.2',
        '--applyset',
        's',
      ]).flags,
    ).toMatchObject({
      helm: { chart: 'web', repo: 'https://charts.example/x', version: '^1.2', plainHttp: false },
    });
    expect(
      parse(['--helm-chart', 'oci://r.example/charts/web', '--plain-http', '--applyset', 's']).flags,
    ).toMatchObject({
      helm: { chart: 'oci://r.example/charts/web', repo: undefined, version: undefined, plainHttp: true },
    });
  });

  it.each<[readonly string[], string]>([
    [
      ['--helm-chart', 'c', '-f', 'x.yaml', '--applyset', 's'],
      '--helm-chart cannot be combined with -f, -k or --oci',
    ],
    [
      ['--helm-chart', 'c', '-k', 'k', '--applyset', 's'],
      '--helm-chart cannot be combined with -f, -k or --oci',
    ],
    [['-f', 'x.yaml', '--values', 'v.yaml', '--applyset', 's'], '--values is for --helm-chart'],
    [['--helm-chart', 'c', '--set', 'novalue', '--applyset', 's'], '--set takes KEY=VALUE, got "novalue"'],
    [['--helm-chart', 'c', '--set', '=x', '--applyset', 's'], '--set takes KEY=VALUE, got "=x"'],
    [
      ['--helm-chart', '', '--applyset', 's'],
      '--helm-chart needs a chart (a directory, oci://…, REPO/NAME), got ""',
    ],
    [
      ['--helm-chart', 'web', '--repo', 'ftp://h/x', '--applyset', 's'],
      "--repo must be a Helm repository's http(s) URL",
    ],
    [
      ['--helm-chart', 'web', '--repo', 'https://u:p@h/x', '--applyset', 's'],
      '--repo must not carry credentials',
    ],
    [
      ['--helm-chart', 'a/web', '--repo', 'https://h/x', '--applyset', 's'],
      "--helm-chart with --repo is a chart's name",
    ],
    [
      ['--helm-chart', 'oci://h/c/web', '--version', 'not a range', '--applyset', 's'],
      '--version must be a semver range',
    ],
    [['--helm-chart', 'web', '--plain-http', '--applyset', 's'], '--plain-http is for an oci:// chart'],
    [['-f', 'x.yaml', '--repo', 'https://h/x', '--applyset', 's'], '--repo is for --helm-chart'],
    [
      ['--helm-chart', 'c', '--release-name', 'Web_1', '--applyset', 's'],
      '--release-name must be a release name',
    ],
    [
      ['--helm-chart', 'c', '--applyset', 'x'.repeat(54)],
      '--applyset (the release name without --release-name) must be',
    ],
    [['--applyset', 's'], '-f FILENAME, -k DIR, --oci URL or --helm-chart CHART is required'],
  ])('refuses %j', (argv, message) => {
    const { flags, stderr } = parse(argv);
    expect(flags).toBe(ExitCode.badInput);
    expect(stderr).toContain(message);
  });
});

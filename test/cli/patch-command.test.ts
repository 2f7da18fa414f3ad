import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/cli-io.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { patchCommand } from '../../src/cli/patch-command.js';
import { buildLastAppliedConfiguration } from '../../src/merge/last-applied-configuration.js';

/** Parsed command output, navigated freely in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON output read by path in tests
type Loose = Record<string, any>;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'applyset-patch-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: string[], files: Record<string, string>) {
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const io: CliIo = { stdout, stderr, env: {}, cwd: dir };
  const code = await patchCommand(argv, io);
  return { code, out, err };
}

const manifestV1 = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  minReadySeconds: 5
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: app:1
`;
const manifestV2 = manifestV1.replace('  minReadySeconds: 5\n', '').replace('app:1', 'app:2');

/** A live Deployment created from manifest v1 (namespace defaulted), then scaled by someone else. */
function liveFromV1(): string {
  const { modified } = buildLastAppliedConfiguration({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      minReadySeconds: 5,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    },
  });
  const spec = modified.spec as Record<string, unknown>;
  return JSON.stringify({ ...modified, spec: { ...spec, replicas: 3 } });
}

describe('applyset patch', () => {
  it('prints the strategic merge patch and the merged live object', async () => {
    const { code, out, err } = await run(['--manifest', 'm.yaml', '--live', 'live.json'], {
      'm.yaml': manifestV2,
      'live.json': liveFromV1(),
    });
    expect(err).toBe('');
    expect(code).toBe(ExitCode.ok);
    const { patch, result } = JSON.parse(out) as { patch: Loose; result: Loose };
    expect(patch.spec).toEqual({
      minReadySeconds: null,
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'app' }],
          containers: [{ image: 'app:2', name: 'app' }],
        },
      },
    });
    expect(typeof patch.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBe(
      'string',
    );
    expect(result.spec.replicas).toBe(3);
    expect(result.spec.minReadySeconds).toBeUndefined();
    expect(result.spec.template.spec.containers).toEqual([{ name: 'app', image: 'app:2' }]);
  });

  it('prints an empty patch when kubectl would report unchanged', async () => {
    const { code, out } = await run(['--manifest', 'm.yaml', '--live', 'live.json'], {
      'm.yaml': manifestV1,
      'live.json': liveFromV1(),
    });
    expect(code).toBe(ExitCode.ok);
    expect(out.startsWith('{"patch":{},"result":')).toBe(true);
  });

  it('takes the original from --last-applied instead of the annotation', async () => {
    const { out } = await run(
      ['--manifest', 'm.yaml', '--live', 'live.yaml', '--last-applied', 'orig.yaml'],
      {
        'm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\ndata: {a: "1"}\n',
        'live.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\ndata: {a: "1", b: "2", c: "3"}\n',
        'orig.yaml': 'data: {a: "1", b: "2"}\n',
      },
    );
    const { patch, result } = JSON.parse(out) as { patch: Loose; result: Loose };
    expect(patch.data).toEqual({ b: null });
    expect(result.data).toEqual({ a: '1', c: '3' });
  });

  it('uses a JSON merge patch for kinds without built-in metadata and for --json-merge', async () => {
    const files = {
      'm.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {items: [a, c]}\n',
      'live.yaml':
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {items: [a, b], extra: x}\n',
    };
    const { out } = await run(['--manifest', 'm.yaml', '--live', 'live.yaml'], files);
    const { result } = JSON.parse(out) as { result: Loose };
    expect(result.spec).toEqual({ items: ['a', 'c'], extra: 'x' });
    const forced = await run(
      [
        '--manifest',
        'm.yaml',
        '--live',
        'live.yaml',
        '--json-merge',
        '--api-version',
        'v1',
        '--kind',
        'ConfigMap',
      ],
      files,
    );
    expect(forced.code).toBe(ExitCode.ok);
  });

  it.each([
    [['--live', 'x.yaml'], /--manifest and --live are required/],
    [['--manifest', 'missing.yaml', '--live', 'missing.yaml'], /cannot read missing\.yaml: ENOENT/],
    [['--manifest', 'bad.yaml', '--live', 'bad.yaml'], /bad\.yaml .*line/],
    [['--manifest', 'two.yaml', '--live', 'two.yaml'], /expected exactly one document, found 2/],
    [['--manifest', 'untyped.yaml', '--live', 'untyped.yaml'], /pass --api-version and --kind/],
    [['--frobnicate'], /Unknown option '--frobnicate'/],
  ])('refuses bad input %j', async (argv, message) => {
    const { code, err } = await run(argv, {
      'x.yaml': 'a: 1\n',
      'bad.yaml': 'a: [\n',
      'two.yaml': 'a: 1\n---\nb: 2\n',
      'untyped.yaml': 'metadata: {name: x}\n',
    });
    expect(code).toBe(ExitCode.badInput);
    expect(err).toMatch(message);
  });
});

import { PassThrough } from 'node:stream';
import { applyFlagSpecs, parseApplySetFlags, type ApplySetFlags } from '../../src/cli/apply-set-flags.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { ExitCode } from '../../src/cli/exit-codes.js';

function parse(argv: readonly string[]): { flags: ApplySetFlags | number; stderr: string } {
  let stderr = '';
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const io: CliIo = { stdout: new PassThrough(), stderr: err, env: {}, cwd: '/' };
  const flags = parseApplySetFlags(['-f', 'dir', '--applyset', 'set', ...argv], io, {
    command: 'apply',
    specs: applyFlagSpecs,
    usage: 'usage\n',
    pruneByDefault: false,
  });
  return { flags, stderr };
}

describe('apply flags as kubectl accepts them', () => {
  it('defaults --field-manager to kubectl-client-side-apply and --validate to strict, as kubectl does', () => {
    expect(parse([]).flags).toMatchObject({
      fieldManager: 'kubectl-client-side-apply',
      fieldValidation: 'strict',
      dryRun: false,
      prune: false,
      recursive: false,
      adopt: true,
      concurrency: 16,
    });
  });

  it.each<[readonly string[], Partial<ApplySetFlags>]>([
    [['--field-manager', 'ci'], { fieldManager: 'ci' }],
    [['--validate'], { fieldValidation: 'strict' }],
    [['--validate=true'], { fieldValidation: 'strict' }],
    [['--validate=warn'], { fieldValidation: 'warn' }],
    [['--validate=ignore'], { fieldValidation: 'ignore' }],
    [['--validate=false'], { fieldValidation: 'ignore' }],
    [['--dry-run'], { dryRun: true }],
    [['--dry-run=client'], { dryRun: true }],
    [['--dry-run=none'], { dryRun: false }],
    [['--adopt'], { adopt: true }],
    [['--adopt=false'], { adopt: false }],
    [['--concurrency', '1'], { concurrency: 1 }],
    [['--concurrency=128'], { concurrency: 128 }],
  ])('%j', (argv, expected) => {
    expect(parse(argv).flags).toMatchObject(expected);
  });

  it.each<[readonly string[], string]>([
    [['--validate=sometimes'], 'invalid --validate value "sometimes"'],
    [['--dry-run=server'], '--dry-run=server is not supported yet'],
    [['--dry-run=maybe'], 'invalid --dry-run value "maybe"'],
    [['--field-manager='], '--field-manager needs a value'],
    [['-n', ''], '-n needs a namespace'],
    [['--adopt=never'], 'not a boolean'],
    [['--concurrency', '0'], '--concurrency must be a whole number from 1 to 128, got "0"'],
    [['--concurrency', '129'], '--concurrency must be a whole number from 1 to 128, got "129"'],
    [['--concurrency', '2.5'], '--concurrency must be a whole number from 1 to 128, got "2.5"'],
    [['--concurrency', 'many'], '--concurrency must be a whole number from 1 to 128, got "many"'],
    [['--concurrency', '4', '--concurrency', '8'], '--concurrency'],
  ])('refuses %j as a usage error', (argv, message) => {
    const { flags, stderr } = parse(argv);
    expect(flags).toBe(ExitCode.badInput);
    expect(stderr).toContain(message);
  });
});

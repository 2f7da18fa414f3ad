import { applyFlagSpecs, diffFlagSpecs } from '../../src/cli/apply-set-flags.js';
import { parseCommandLine, UsageError } from '../../src/cli/parse-command-line.js';

const parse = (argv: readonly string[]) => Object.fromEntries(parseCommandLine(argv, applyFlagSpecs));

describe('parseCommandLine (kubectl flag forms)', () => {
  it.each<[string, readonly string[], Record<string, readonly string[]>]>([
    ['-f repeats, kept in order', ['-f', 'a', '-f', 'b', '--filename', 'c'], { filename: ['a', 'b', 'c'] }],
    ['--name=value and -nvalue', ['--applyset=x', '-nprod'], { applyset: ['x'], namespace: ['prod'] }],
    ['-n=value', ['-n=prod'], { namespace: ['prod'] }],
    ['grouped shorthands: -Rf DIR', ['-Rf', 'dir'], { recursive: ['true'], filename: ['dir'] }],
    ['-f - is standard input', ['-f', '-'], { filename: ['-'] }],
    ['--prune=false', ['--prune=false'], { prune: ['false'] }],
    ['bare --dry-run is client', ['--dry-run'], { 'dry-run': ['client'] }],
    ['--dry-run=none', ['--dry-run=none'], { 'dry-run': ['none'] }],
    ['bare --validate is strict', ['--validate'], { validate: ['strict'] }],
    ['--validate=false', ['--validate=false'], { validate: ['false'] }],
    ['-- ends the flags', ['--prune', '--'], { prune: ['true'] }],
  ])('%s', (_name, argv, expected) => {
    expect(parse(argv)).toEqual(expected);
  });

  it.each<[string, readonly string[], RegExp]>([
    [
      '--applyset twice',
      ['--applyset', 'x', '--applyset', 'y'],
      /--applyset was given more than once \("x", then "y"\)/,
    ],
    ['-n twice', ['-n', 'a', '-n', 'b'], /--namespace \(-n\) was given more than once \("a", then "b"\)/],
    ['-n then --namespace', ['-n', 'a', '--namespace', 'b'], /--namespace was given more than once/],
    ['a boolean twice', ['--prune', '--prune=false'], /--prune was given more than once/],
    ['--kubeconfig twice', ['--kubeconfig=a', '--kubeconfig=b'], /--kubeconfig was given more than once/],
    ['--context twice', ['--context', 'a', '--context', 'b'], /--context was given more than once/],
    ['an unknown flag', ['--frobnicate'], /unknown flag: --frobnicate/],
    ['an unknown shorthand', ['-x'], /unknown shorthand flag: 'x' in -x/],
    ['a missing value', ['-f'], /flag needs an argument: -f/],
    ['a positional argument', ['dir'], /unexpected argument "dir"/],
    ['a bad boolean', ['--prune=maybe'], /invalid argument "maybe" for --prune/],
  ])('refuses %s', (_name, argv, message) => {
    expect(() => parse(argv)).toThrow(UsageError);
    expect(() => parse(argv)).toThrow(message);
  });

  it('gives diff no --dry-run or --force', () => {
    expect(() => parseCommandLine(['--dry-run'], diffFlagSpecs)).toThrow('unknown flag: --dry-run');
    expect(() => parseCommandLine(['--force'], diffFlagSpecs)).toThrow('unknown flag: --force');
  });
});

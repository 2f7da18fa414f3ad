/**
 * One flag of a subcommand. `string` flags take a value (`--name V`, `--name=V`, `-n V`, `-nV`,
 * `-n=V`); `boolean` flags take none or an explicit `=true|false`; `optional-value` flags, like
 * kubectl's `--validate`, take `=V` or stand alone for `bare`.
 */
export type FlagSpec =
  | { readonly type: 'string'; readonly short?: string; readonly repeats?: boolean }
  | { readonly type: 'boolean'; readonly short?: string }
  | { readonly type: 'optional-value'; readonly short?: string; readonly bare: string };

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

/** What was given for each flag, in order; a flag not given is absent. */
export type ParsedFlags = ReadonlyMap<string, readonly string[]>;

/** The command line is wrong: the command prints this with its usage and exits with `badInput`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'USAGE';
}

/**
 * Parses flags the way kubectl's pflag does (long and short forms, `=` values, grouped boolean
 * shorthands, `--` ending the flags, `--flag=false`), with one deliberate difference: pflag keeps the
 * last of a flag given twice, and for `-n a -n b` or `--applyset x --applyset y` that silently picks
 * one. Here a flag given twice is an error unless it is declared to repeat (`-f`), whose values are
 * kept in order. Positional arguments are refused: no subcommand takes any.
 */
export function parseCommandLine(argv: readonly string[], specs: FlagSpecs): ParsedFlags {
  return parseArguments(argv, specs, 0).flags;
}

/**
 * The same parsing, for the commands that name an object (`applyset reconcile NAME`): at most
 * `maxArgs` positional arguments are taken, in order, wherever they stand among the flags.
 */
export function parseCommandLineWithArgs(
  argv: readonly string[],
  specs: FlagSpecs,
  maxArgs: number,
): { readonly flags: ParsedFlags; readonly args: readonly string[] } {
  return parseArguments(argv, specs, maxArgs);
}

function parseArguments(
  argv: readonly string[],
  specs: FlagSpecs,
  maxArgs: number,
): { readonly flags: ParsedFlags; readonly args: readonly string[] } {
  const args: string[] = [];
  const positional = (arg: string) => {
    if (args.length >= maxArgs) throw unexpected(arg, maxArgs);
    args.push(arg);
  };
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.short !== undefined) byShort.set(spec.short, name);
  }
  const values = new Map<string, string[]>();
  const record = (name: string, value: string, spelled: string) => {
    const spec = specs[name];
    const previous = values.get(name);
    if (previous === undefined) {
      values.set(name, [value]);
      return;
    }
    if (spec?.type === 'string' && spec.repeats === true) {
      previous.push(value);
      return;
    }
    const also = spelled === `--${name}` ? '' : ` (${spelled})`;
    throw new UsageError(
      `--${name}${also} was given more than once (${JSON.stringify(previous[0])}, then ` +
        `${JSON.stringify(value)}); it does not repeat, and taking either one could write to the wrong place`,
    );
  };

  let index = 0;
  const next = (spelled: string): string => {
    const value = argv[index + 1];
    if (value === undefined) throw new UsageError(`flag needs an argument: ${spelled}`);
    index += 1;
    return value;
  };

  for (; index < argv.length; index += 1) {
    const arg = argv[index] ?? '';
    if (arg === '--') {
      for (const rest of argv.slice(index + 1)) positional(rest);
      break;
    }
    if (arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
      const inline = equals === -1 ? undefined : arg.slice(equals + 1);
      const spec = specs[name];
      if (spec === undefined || name === '') throw new UsageError(`unknown flag: --${name}`);
      const spelled = `--${name}`;
      switch (spec.type) {
        case 'string':
          record(name, inline ?? next(spelled), spelled);
          break;
        case 'boolean':
          record(name, inline === undefined ? 'true' : booleanValue(spelled, inline), spelled);
          break;
        case 'optional-value':
          record(name, inline ?? spec.bare, spelled);
          break;
      }
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      // Grouped shorthands: `-Rf DIR`. Booleans may be grouped; the first flag taking a value takes
      // the rest of the group (`-fDIR`, `-f=DIR`) or the next argument.
      const group = arg.slice(1);
      for (let at = 0; at < group.length; at += 1) {
        const letter = group[at] ?? '';
        const name = byShort.get(letter);
        if (name === undefined) throw new UsageError(`unknown shorthand flag: '${letter}' in ${arg}`);
        const spec = specs[name];
        const spelled = `-${letter}`;
        const rest = group.slice(at + 1);
        const inline = rest.startsWith('=') ? rest.slice(1) : rest === '' ? undefined : rest;
        if (spec?.type === 'string') {
          record(name, inline ?? next(spelled), spelled);
          break;
        }
        if (spec?.type === 'optional-value') {
          record(name, rest.startsWith('=') ? rest.slice(1) : spec.bare, spelled);
          if (rest.startsWith('=')) break;
          continue;
        }
        if (rest.startsWith('=')) {
          record(name, booleanValue(spelled, rest.slice(1)), spelled);
          break;
        }
        record(name, 'true', spelled);
      }
      continue;
    }
    positional(arg);
  }
  return { flags: values, args };
}

function unexpected(arg: string, maxArgs: number): UsageError {
  return new UsageError(
    maxArgs === 0
      ? `unexpected argument ${JSON.stringify(arg)}: this command takes flags only`
      : `unexpected argument ${JSON.stringify(arg)}: this command takes at most ${maxArgs} name${maxArgs === 1 ? '' : 's'}`,
  );
}

/** Go's strconv.ParseBool, which pflag uses for `--flag=VALUE`. */
function booleanValue(spelled: string, value: string): string {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return 'true';
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return 'false';
  throw new UsageError(`invalid argument ${JSON.stringify(value)} for ${spelled}: not a boolean`);
}

/** The single value of a flag, or undefined when it was not given. */
export function single(flags: ParsedFlags, name: string): string | undefined {
  return flags.get(name)?.[0];
}

/** A boolean flag's value; `fallback` when it was not given. */
export function flagIsTrue(flags: ParsedFlags, name: string, fallback = false): boolean {
  const value = single(flags, name);
  return value === undefined ? fallback : value === 'true';
}

/**
 * One flag of a subcommand. `string` flags take a value (`--name V`, `--name=V`, `-n V`, `-nV`,
 * `-n=V`); `boolean` flags take none or an explicit `=true|false`; `optional-value` flags, like
 * kubectl's `--validate`, take `=V` or stand alone for `bare`.
 */
type FlagSpec =
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

/** A parse in progress: the arguments, where it stands, and what it has collected. */
interface ParseState {
  readonly argv: readonly string[];
  readonly specs: FlagSpecs;
  readonly maxArgs: number;
  /** Shorthand letter → flag name. */
  readonly byShort: ReadonlyMap<string, string>;
  readonly values: Map<string, string[]>;
  readonly args: string[];
  /** The argument being read; a flag that takes the next argument as its value moves it on. */
  index: number;
}

function parseArguments(
  argv: readonly string[],
  specs: FlagSpecs,
  maxArgs: number,
): { readonly flags: ParsedFlags; readonly args: readonly string[] } {
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.short !== undefined) byShort.set(spec.short, name);
  }
  const state: ParseState = { argv, specs, maxArgs, byShort, values: new Map(), args: [], index: 0 };
  for (; state.index < argv.length; state.index += 1) {
    const arg = argv[state.index] ?? '';
    if (arg === '--') {
      for (const rest of argv.slice(state.index + 1)) takePositional(state, rest);
      break;
    }
    if (arg.startsWith('--')) parseLongFlag(state, arg);
    else if (arg.startsWith('-') && arg !== '-') parseShorthandGroup(state, arg);
    else takePositional(state, arg);
  }
  return { flags: state.values, args: state.args };
}

/** `--name`, `--name=V` or `--name V`. */
function parseLongFlag(state: ParseState, arg: string): void {
  const equals = arg.indexOf('=');
  const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals);
  const inline = equals === -1 ? undefined : arg.slice(equals + 1);
  const spec = state.specs[name];
  if (spec === undefined || name === '') throw new UsageError(`unknown flag: --${name}`);
  const spelled = `--${name}`;
  switch (spec.type) {
    case 'string':
      recordFlag(state, name, inline ?? nextValue(state, spelled), spelled);
      break;
    case 'boolean':
      recordFlag(state, name, inline === undefined ? 'true' : booleanValue(spelled, inline), spelled);
      break;
    case 'optional-value':
      recordFlag(state, name, inline ?? spec.bare, spelled);
      break;
  }
}

/**
 * Grouped shorthands: `-Rf DIR`. Booleans may be grouped; the first flag taking a value takes the
 * rest of the group (`-fDIR`, `-f=DIR`) or the next argument.
 */
function parseShorthandGroup(state: ParseState, arg: string): void {
  const group = arg.slice(1);
  for (let at = 0; at < group.length; at += 1) {
    const letter = group[at] ?? '';
    const name = state.byShort.get(letter);
    if (name === undefined) throw new UsageError(`unknown shorthand flag: '${letter}' in ${arg}`);
    const spec = state.specs[name];
    const spelled = `-${letter}`;
    const rest = group.slice(at + 1);
    const inline = rest.startsWith('=') ? rest.slice(1) : rest === '' ? undefined : rest;
    if (spec?.type === 'string') {
      recordFlag(state, name, inline ?? nextValue(state, spelled), spelled);
      return;
    }
    if (spec?.type === 'optional-value') {
      recordFlag(state, name, rest.startsWith('=') ? rest.slice(1) : spec.bare, spelled);
      if (rest.startsWith('=')) return;
      continue;
    }
    if (rest.startsWith('=')) {
      recordFlag(state, name, booleanValue(spelled, rest.slice(1)), spelled);
      return;
    }
    recordFlag(state, name, 'true', spelled);
  }
}

function takePositional(state: ParseState, arg: string): void {
  if (state.args.length >= state.maxArgs) throw unexpected(arg, state.maxArgs);
  state.args.push(arg);
}

/** The argument after the flag, as its value. */
function nextValue(state: ParseState, spelled: string): string {
  const value = state.argv[state.index + 1];
  if (value === undefined) throw new UsageError(`flag needs an argument: ${spelled}`);
  state.index += 1;
  return value;
}

function recordFlag(state: ParseState, name: string, value: string, spelled: string): void {
  const spec = state.specs[name];
  const previous = state.values.get(name);
  if (previous === undefined) {
    state.values.set(name, [value]);
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

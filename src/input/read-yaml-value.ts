import yaml from 'js-yaml';
import { checkInputSize, formatSize, INPUT_BOUNDS, InputParseError, type InputKind } from './input-bounds.js';
import { measureExpansion } from './measure-expansion.js';

/**
 * The one YAML document of a text of tenant input (a kustomization file, a kubeconfig Secret), through
 * the parse door: refused over the size of its kind before it is parsed, over its depth while it is
 * parsed (js-yaml stops before it recurses further), and for its aliases before anything walks the value:
 * js-yaml shares the object of an anchor with each alias, so the value is small until a walk expands
 * it. The alias test is go-yaml's (measure-expansion.ts), the one kustomize and kubectl apply to the
 * same file. Throws InputParseError naming `source`.
 */
export function readYamlValue(text: string, source: string, kind: InputKind): unknown {
  const bounds = INPUT_BOUNDS[kind];
  const tooLarge = checkInputSize(text, source, bounds);
  if (tooLarge !== undefined) throw tooLarge;
  let value: unknown;
  // js-yaml 4.3 counts the nesting as it parses and stops at `maxDepth`; its typings do not list it yet.
  const options: yaml.LoadOptions & { maxDepth: number } = { maxDepth: bounds.maxDepth };
  try {
    value = yaml.load(text, options);
  } catch (error) {
    if (error instanceof yaml.YAMLException && error.reason.startsWith('nesting exceeded maxDepth')) {
      throw new InputParseError(source, 'too-deep', `nests deeper than ${bounds.maxDepth} levels`);
    }
    throw syntaxError(error, source);
  }
  const measure = measureExpansion(value, bounds.maxExpandedBytes);
  if (measure.ok) return value;
  if (measure.kind === 'excessive-aliasing') {
    throw new InputParseError(
      source,
      'excessive-aliasing',
      `contains excessive aliasing (${measure.aliasNodes} of ${measure.nodes} nodes come from aliases ` +
        `before it was refused)`,
    );
  }
  throw new InputParseError(
    source,
    'expands-too-large',
    `expands to more than ${formatSize(bounds.maxExpandedBytes)} of keys and values once its aliases are expanded`,
  );
}

/** js-yaml's reason and place, without the lines its message quotes. */
function syntaxError(error: unknown, source: string): InputParseError {
  if (error instanceof yaml.YAMLException) {
    const { mark, reason } = error;
    const where = mark === undefined ? '' : ` at line ${mark.line + 1}, column ${mark.column + 1}`;
    return new InputParseError(source, 'syntax', `is not valid YAML: ${reason}${where}`);
  }
  if (error instanceof RangeError) return new InputParseError(source, 'too-deep', 'nests too deeply to read');
  return new InputParseError(
    source,
    'syntax',
    `is not valid YAML (${error instanceof Error ? error.name : 'error'})`,
  );
}

import yaml from 'js-yaml';

/**
 * A js-yaml exception for a problem found at `position` of the text while js-yaml's parse events are
 * read, with the mark `decodeDocuments` turns into a line, a column and a document index.
 */
export function yamlErrorAt(input: string, position: number, reason: string): yaml.YAMLException {
  const before = input.slice(0, position);
  const line = before.split('\n').length - 1;
  const column = position - (before.lastIndexOf('\n') + 1);
  const mark = { name: null, buffer: input, position, line, column, snippet: null };
  return new yaml.YAMLException(
    reason,
    mark as unknown as ConstructorParameters<typeof yaml.YAMLException>[1],
  );
}

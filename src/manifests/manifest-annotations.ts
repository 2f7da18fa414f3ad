/**
 * An object's annotations as a manifest or a live object carries them: `metadata.annotations`, its
 * string values only. Anything else there (a missing or malformed `metadata`, a number a tenant wrote
 * unquoted) reads as no annotation, so a reader of hook, wave or ownership annotations never trips on
 * a shape the API server would refuse anyway.
 */
export function manifestAnnotations(
  object: Readonly<Record<string, unknown>>,
): Readonly<Record<string, string>> {
  const metadata = object['metadata'];
  if (!isRecord(metadata)) return {};
  const annotations = metadata['annotations'];
  if (!isRecord(annotations)) return {};
  return Object.fromEntries(
    Object.entries(annotations).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

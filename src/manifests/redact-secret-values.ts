/**
 * The API server echoes what it refused: "illegal base64 data at input byte 4" comes with the value,
 * and a strict-decoding or validation error quotes the field. For a Secret that message would carry
 * its data into logs, Events and status, so every message about a Secret passes through here first.
 *
 * Values shorter than MIN_REDACTED_LENGTH characters are left alone: replacing every "a" or "1" in a
 * message would make it unreadable while hiding nothing a guess would not find.
 */
const MIN_REDACTED_LENGTH = 4;
const REDACTED = '[REDACTED]';

/** `message` with every value of the Secret's `data` and `stringData` (raw, escaped, decoded) replaced. */
export function redactSecretValues(message: string, manifest: unknown): string {
  const secrets = secretTexts(manifest)
    .filter((text) => text.length >= MIN_REDACTED_LENGTH)
    .sort((a, b) => b.length - a.length);
  let redacted = message;
  for (const text of secrets) redacted = redacted.split(text).join(REDACTED);
  return redacted;
}

/** Is this manifest a core/v1 Secret (the only kind whose values are redacted)? */
export function isSecretManifest(manifest: unknown): boolean {
  return isRecord(manifest) && manifest['kind'] === 'Secret' && manifest['apiVersion'] === 'v1';
}

function secretTexts(manifest: unknown): string[] {
  if (!isRecord(manifest)) return [];
  const texts: string[] = [];
  for (const field of ['data', 'stringData'] as const) {
    const values = manifest[field];
    if (!isRecord(values)) continue;
    for (const value of Object.values(values)) {
      if (typeof value !== 'string') continue;
      texts.push(value, ...escapedForms(value));
      const decoded = field === 'data' ? printableBase64(value) : undefined;
      if (decoded !== undefined) texts.push(decoded, ...escapedForms(decoded));
    }
  }
  return texts;
}

/** The forms a server message may quote a value in: Go's %q and JSON both escape quotes and newlines. */
function escapedForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  return json === value ? [] : [json];
}

/** The text `data` holds when it is valid base64 of printable UTF-8; undefined otherwise. */
function printableBase64(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) return undefined;
  const binary = atob(value);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // eslint-disable-next-line no-control-regex -- binary data is not text a message could quote
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(text) ? undefined : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

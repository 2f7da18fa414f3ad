/**
 * The lines of a Pod's log as the web view shows them: the last few, with terminal control sequences
 * (colours, cursor moves, titles) and other control characters taken out. A log is a tenant's output:
 * it is text on the page (html.ts escapes it), and nothing in it may restyle the viewer's terminal when
 * copied, hide text, or reorder it (bidirectional overrides).
 */

/** CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ESC \`) and two-byte escapes (`ESC x`). */
// eslint-disable-next-line no-control-regex -- escape sequences are what it removes
const ESCAPE_SEQUENCES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;

/** C0 controls but tab, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- control characters are what it removes
const CONTROL_CHARACTERS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The text of one line as a terminal would leave it: what a carriage return overwrote is dropped. */
function cleanLine(line: string): string {
  const overwritten = line.replace(ESCAPE_SEQUENCES, '');
  const afterReturn = overwritten.endsWith('\r') ? overwritten.slice(0, -1) : overwritten;
  return afterReturn.slice(afterReturn.lastIndexOf('\r') + 1).replace(CONTROL_CHARACTERS, '');
}

/** The last `count` lines of `text`, cleaned; a final newline ends the last line, it adds none. */
export function lastLogLines(text: string, count: number): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(-count).map(cleanLine);
}

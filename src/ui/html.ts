/**
 * HTML built by a tagged template that escapes every interpolated value, so a name, message or diff
 * from the cluster (untrusted: anyone who may write an ApplySet or an Event writes them) is always text.
 * Only markup made by `html` itself passes through unescaped.
 */

const SAFE = Symbol('safe-html');

/** Markup made by `html`: inserted as it is into another `html` template. */
export interface SafeHtml {
  readonly [SAFE]: true;
  readonly text: string;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or attribute value: `&`, `<`, `>`, both quotes escaped. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

type HtmlValue = SafeHtml | string | number | undefined | null | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === undefined || value === null || value === false) return '';
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  if (typeof value === 'object') return (value as SafeHtml).text;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let text = strings[0] ?? '';
  values.forEach((value, index) => {
    text += render(value) + (strings[index + 1] ?? '');
  });
  return { [SAFE]: true, text };
}

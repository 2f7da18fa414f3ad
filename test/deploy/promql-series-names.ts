// The metric names a PromQL expression reads, so that a test can hold every alert and dashboard query
// to the series the controller really exports. Not a PromQL parser: it removes what cannot be a metric
// name (strings, label matchers, ranges, label lists after by/on/...) and keeps the identifiers left that
// are not functions, keywords or parts of numbers and durations. A name given only as a __name__ matcher
// is refused rather than missed.

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'atan2',
  'inf',
  'nan',
]);

/** The metric names `expr` selects, sorted, each once. */
export function promqlSeriesNames(expr: string): string[] {
  if (/__name__/.test(expr)) throw new Error(`cannot tell the metric names of ${expr}: it matches __name__`);
  const bare = expr
    .replace(/#.*$/gm, '')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    // A label list goes whole, so that `sum by (le) (x)` reads as the call `sum (x)`.
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ');
  const names = new Set<string>();
  // Not after a digit, a dot or `$` (1e3, 5m, 0x1f, a Grafana $variable); not followed by more of a
  // name (so a function's name is never cut short) or by `(` (a function call).
  for (const match of bare.matchAll(/(?<![\w:.$])[a-zA-Z_:][\w:]*(?![\w:]|\s*\()/g)) {
    if (!KEYWORDS.has(match[0].toLowerCase())) names.add(match[0]);
  }
  return [...names].sort();
}

/**
 * The metric names of a Grafana variable's query: `label_values(<selector>, <label>)` reads the series
 * of its selector; any other query is PromQL.
 */
export function grafanaVariableSeriesNames(query: string): string[] {
  const labelValues = /^\s*label_values\(([\s\S]*),\s*[a-zA-Z_]\w*\s*\)\s*$/.exec(query);
  return promqlSeriesNames(labelValues?.[1] ?? query);
}

interface DashboardPanel {
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

interface Dashboard {
  panels?: DashboardPanel[];
  templating?: { list?: { type?: string; query?: string | { query?: string } }[] };
}

/** Every PromQL query of a Grafana dashboard: its panels' targets (rows' panels too) and its variables'. */
export function dashboardSeriesNames(dashboard: Dashboard): string[] {
  const names = new Set<string>();
  const visit = (panels: readonly DashboardPanel[] = []) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? [])
        if (target.expr !== undefined) promqlSeriesNames(target.expr).forEach((name) => names.add(name));
      visit(panel.panels);
    }
  };
  visit(dashboard.panels);
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    if (query !== undefined) grafanaVariableSeriesNames(query).forEach((name) => names.add(name));
  }
  return [...names].sort();
}

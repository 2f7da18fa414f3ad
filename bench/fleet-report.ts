// The fleet bench's summary: one column per run (a size, a variant), the rows docs/performance.md
// shows, as a Markdown table.
import { mib } from './fleet-controller.js';
import type { FirstFigures, RelistFigures, RestartFigures, RestFigures } from './fleet-phases.js';
import { lists, sum, writes, type RequestCounts } from './fleet-requests.js';
import type { FleetSpec } from './fleet-run.js';

export interface FleetResult {
  readonly label: string;
  readonly spec: FleetSpec;
  readonly loadStart: string;
  loadEnd?: string;
  first?: FirstFigures;
  second?: RequestCounts;
  rest?: RestFigures;
  restart?: RestartFigures;
  relist?: RelistFigures;
}

type Row = readonly [string, (result: FleetResult) => string | undefined];

const perSet = (counts: RequestCounts | undefined, n: number) =>
  counts === undefined ? undefined : (sum(counts) / n).toFixed(1);

const ROWS: readonly Row[] = [
  ['all Ready', (r) => r.first && `${r.first.readySeconds.toFixed(1)} s`],
  [
    'controller CPU until then',
    (r) =>
      r.first &&
      `${r.first.cpuSeconds.toFixed(1)} s (${((r.first.cpuSeconds / r.first.readySeconds) * 100).toFixed(0)}%)`,
  ],
  ['peak RSS', (r) => r.first && r.first.shards.map((shard) => mib(shard.peakRss)).join(' + ')],
  ['slowest shard Ready', (r) => ((r.first?.shards.length ?? 0) > 1 ? shardSpread(r.first) : '-')],
  ['first reconcile, requests per ApplySet', (r) => perSet(r.first?.requests, r.spec.n)],
  ['first reconcile, LISTs in all', (r) => r.first && String(lists(r.first.requests))],
  ['second reconcile, requests per ApplySet', (r) => perSet(r.second, r.spec.n)],
  ['second reconcile, writes in all', (r) => r.second && String(writes(r.second))],
  ['at rest, controller CPU per reconcile', (r) => r.rest && `${r.rest.cpuMsPerReconcile.toFixed(1)} ms`],
  [
    'at rest, requests per reconcile',
    (r) => r.rest && perSet(r.rest.requests, Math.max(r.rest.reconciles, 1)),
  ],
  ['at rest, reconciles in the window', (r) => r.rest && String(r.rest.reconciles)],
  ['at rest, RSS', (r) => r.rest && mib(r.rest.idleRss)],
  ['restart, all reconciled after', (r) => r.restart && `${r.restart.readySeconds.toFixed(1)} s`],
  ['restart, writes', (r) => r.restart && String(writes(r.restart.requests))],
  [
    'API server restart, LISTs in 60 s',
    (r) =>
      r.relist &&
      `${lists(r.relist.requests)}${r.relist.exited > 0 ? ` (${r.relist.exited} controllers exited)` : ''}`,
  ],
  ['load average, start / end', (r) => `${r.loadStart.split(' ')[0]} / ${r.loadEnd?.split(' ')[0] ?? '?'}`],
];

function shardSpread(first: FirstFigures | undefined): string | undefined {
  if (first === undefined) return undefined;
  const times = first.shards.map((shard) => shard.readySeconds);
  return `${Math.max(...times).toFixed(1)} s (fastest ${Math.min(...times).toFixed(1)} s)`;
}

export function summaryTable(results: readonly FleetResult[]): string {
  const header = ['', ...results.map((result) => result.label)];
  const body = ROWS.map(([name, cell]) => [name, ...results.map((result) => cell(result) ?? '-')]);
  const widths = header.map((_, column) =>
    Math.max(3, ...[header, ...body].map((row) => (row[column] ?? '').length)),
  );
  const line = (row: readonly string[]) =>
    `| ${row.map((value, column) => value.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

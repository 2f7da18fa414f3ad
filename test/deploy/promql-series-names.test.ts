import {
  dashboardSeriesNames,
  grafanaVariableSeriesNames,
  promqlSeriesNames,
} from './promql-series-names.js';

describe('the metric names of a PromQL expression', () => {
  it('keeps selectors and drops functions, aggregation labels, matchers, ranges and numbers', () => {
    expect(
      promqlSeriesNames(
        'histogram_quantile(0.95, sum by (le, result) (rate(applyset_reconcile_duration_seconds_bucket{job=~"$job", result!="deleted"}[$__rate_interval])))',
      ),
    ).toEqual(['applyset_reconcile_duration_seconds_bucket']);
    expect(
      promqlSeriesNames(
        'sum(rate(a_total{x="by (b) c{d}"}[10m] offset 5m)) / on (namespace, name) group_left (revision) b_info > 1e3',
      ),
    ).toEqual(['a_total', 'b_info']);
    expect(promqlSeriesNames('absent(up{job="x"} == 1) or vector(0)')).toEqual(['up']);
    expect(promqlSeriesNames('max(applyset_queue_depth) > bool 50 unless x:recorded:rate5m')).toEqual([
      'applyset_queue_depth',
      'x:recorded:rate5m',
    ]);
  });

  it('does not cut a function name short to find a series in it', () => {
    expect(promqlSeriesNames('rate (a[5m]) + increase(b[1h])')).toEqual(['a', 'b']);
  });

  it('refuses an expression that names its series with __name__', () => {
    expect(() => promqlSeriesNames('{__name__=~"applyset_.*"}')).toThrow('__name__');
  });

  it('reads the selector of a Grafana label_values variable, not its label', () => {
    expect(grafanaVariableSeriesNames('label_values(applyset_ready{job=~"$job"}, namespace)')).toEqual([
      'applyset_ready',
    ]);
    expect(grafanaVariableSeriesNames('label_values(applyset_leader, job)')).toEqual(['applyset_leader']);
  });

  it('collects the queries of every panel, nested rows and query variables of a dashboard', () => {
    expect(
      dashboardSeriesNames({
        panels: [
          { targets: [{ expr: 'sum(a_total)' }, { expr: 'b' }] },
          { panels: [{ targets: [{ expr: 'rate(c_total[1m])' }] }] },
        ],
        templating: {
          list: [
            { type: 'datasource', query: 'prometheus' },
            { type: 'query', query: { query: 'label_values(d, name)' } },
          ],
        },
      }),
    ).toEqual(['a_total', 'b', 'c_total', 'd']);
  });
});

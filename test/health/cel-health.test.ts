import {
  MAX_COMPREHENSION_DEPTH,
  MAX_EXPRESSION_LENGTH,
  MAX_OBJECT_BYTES,
  compileCelPredicate,
} from '../../src/health/cel-expression.js';
import {
  healthCheckExprProblems,
  healthJudge,
  mergeHealthCheckExprs,
  type HealthCheckExpr,
} from '../../src/health/cel-health.js';
import type { JsonObject } from '../../src/manifests/json-value.js';

// The shape of Flux's documented examples (kustomize-controller spec.healthCheckExprs): a Ready
// condition read through filter/all, as for a cert-manager Certificate.
const certificateCheck: HealthCheckExpr = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  failed: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'False')",
  current: "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')",
};
const certificate = (ready: string | undefined, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', generation: 1 },
  spec: { secretName: 'web-tls' },
  status: {
    observedGeneration: 1,
    conditions: ready === undefined ? [] : [{ type: 'Ready', status: ready, reason: 'r' }],
    ...extra,
  },
});

describe('healthJudge (CEL health checks, Flux shape)', () => {
  const judge = healthJudge([certificateCheck]);

  it.each([
    ['Ready True', certificate('True'), 'Current', `current expression is true: ${certificateCheck.current}`],
    ['Ready False', certificate('False'), 'Failed', `failed expression is true: ${certificateCheck.failed}`],
    [
      'Ready Unknown',
      certificate('Unknown'),
      'InProgress',
      `current expression is false: ${certificateCheck.current}`,
    ],
  ])('judges a Certificate with %s as %s', (_name, object, status, message) => {
    expect(judge(object)).toEqual({ status, message });
  });

  it('evaluates failed first, then current, then inProgress, as Flux does', () => {
    const always: HealthCheckExpr = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      failed: "status.phase == 'Broken'",
      current: "status.phase in ['Done', 'Broken']",
      inProgress: 'true',
    };
    const widget = (phase: string): JsonObject => ({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      status: { phase },
    });
    const check = healthJudge([always]);
    expect(check(widget('Broken')).status).toBe('Failed');
    expect(check(widget('Done')).status).toBe('Current');
    expect(check(widget('Pending'))).toEqual({
      status: 'InProgress',
      message: 'inProgress expression is true: true',
    });
  });

  it('makes the object Unknown, naming the error, when a field is missing or the result is no bool', () => {
    const noStatus: JsonObject = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'web' },
    };
    expect(judge(noStatus)).toEqual({
      status: 'Unknown',
      message: `failed expression ${certificateCheck.failed} failed: unresolved attribute (the object's top-level fields are apiVersion, kind, metadata)`,
    });
    const notBool = healthJudge([{ apiVersion: 'v1', kind: 'ConfigMap', current: 'data.size' }]);
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { size: '3' } };
    expect(notBool(configMap)).toEqual({
      status: 'Unknown',
      message: 'current expression data.size failed: must evaluate to a bool, got string 3',
    });
    const missingKey = healthJudge([{ apiVersion: 'v1', kind: 'ConfigMap', current: "data.other == 'x'" }]);
    expect(missingKey(configMap)).toEqual({
      status: 'Unknown',
      message: "current expression data.other == 'x' failed: field not found: other",
    });
  });

  it('keeps kstatus for a deletion, a generation not observed yet, a missing object and other kinds', () => {
    expect(judge(certificate('True', { observedGeneration: 0 })).message).toBe(
      'generation 1 is not observed yet (observed 0)',
    );
    const deleting = { ...certificate('True'), metadata: { name: 'web', deletionTimestamp: 'now' } };
    expect(judge(deleting).status).toBe('Terminating');
    expect(judge(undefined).status).toBe('NotFound');
    expect(judge({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }).status).toBe('Current');
    // The same kind at another apiVersion is not the check's: kstatus reads its Ready condition.
    expect(judge({ ...certificate('False'), apiVersion: 'cert-manager.io/v1beta1' })).toEqual({
      status: 'InProgress',
      message: 'Ready is False',
    });
  });

  it('does not evaluate an object larger than the bound', () => {
    const huge = certificate('True', { blob: 'x'.repeat(MAX_OBJECT_BYTES) });
    const health = judge(huge);
    expect(health.status).toBe('Unknown');
    expect(health.message).toMatch(
      /^failed expression .* failed: the object is \d+ bytes of JSON, more than the 1048576 evaluated$/,
    );
  });
});

describe('compileCelPredicate', () => {
  it('refuses a parse error with the parser text, an empty, a too long and a too deep expression', () => {
    expect(compileCelPredicate('status.phase ==')).toEqual({
      error: 'is not valid CEL: <input>:1:14: found = but expecting end of input',
    });
    expect(compileCelPredicate('  ')).toEqual({ error: 'is empty' });
    const long = `true${' && true'.repeat(MAX_EXPRESSION_LENGTH / 8)}`;
    expect(compileCelPredicate(long)).toEqual({
      error: `is ${long.length} characters long, more than the ${MAX_EXPRESSION_LENGTH} allowed`,
    });
    expect(compileCelPredicate('status.a.all(x, status.b.all(y, x == y))')).not.toHaveProperty('error');
    expect(
      compileCelPredicate('status.a.all(x, status.b.all(y, status.c.exists(z, x == y && y == z)))'),
    ).toEqual({
      error: `nests 3 comprehensions (all, exists, filter, map) in one another, more than the ${MAX_COMPREHENSION_DEPTH} allowed`,
    });
  });
});

describe('healthCheckExprProblems and mergeHealthCheckExprs', () => {
  it('names each expression field that does not compile', () => {
    expect(
      healthCheckExprProblems({ apiVersion: 'v1', kind: 'Pod', current: 'true', failed: 'status.(' }),
    ).toEqual([
      { field: 'failed', message: 'is not valid CEL: <input>:1:7: found . but expecting end of input' },
    ]);
  });

  it("lets the ApplySet's entry for a kind win over the cluster default", () => {
    const base = { apiVersion: 'example.com/v1', kind: 'Widget', current: 'false' };
    const other = { apiVersion: 'example.com/v1', kind: 'Gadget', current: 'true' };
    const own = { apiVersion: 'example.com/v1', kind: 'Widget', current: 'true' };
    expect(mergeHealthCheckExprs([base, other], [own])).toEqual([other, own]);
  });
});

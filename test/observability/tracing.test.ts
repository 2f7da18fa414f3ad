import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createTracing } from '../../src/observability/tracing.js';
import { currentTraceId, inSpan, startTrace } from '../../src/observability/trace-span.js';
import { tracingSettingsOf } from '../../src/cli/tracing-env.js';

const on = {
  endpoint: 'http://127.0.0.1:4318/v1/traces',
  sampler: { kind: 'parentbased_always_on' },
  serviceName: 'applyset-controller',
  instance: 'test',
} as const;

/** An exporter keeping what it was sent (the SDK's in-memory one forgets it when shut down). */
function collecting(): SpanExporter & { readonly spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export: (batch, done) => {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
}

describe('tracing', () => {
  it('off: no exporter is made, no span, no trace id; the work runs as it is', async () => {
    let exporters = 0;
    const tracing = createTracing(
      undefined,
      () => {
        exporters += 1;
        return collecting();
      },
      '0.0.0',
    );
    expect(tracing.enabled).toBe(false);
    const value = await inSpan('source.fetch', {}, async () => currentTraceId() ?? 'no trace');
    expect(value).toBe('no trace');
    await tracing.shutdown();
    expect(exporters).toBe(0);
  });

  it('on: a child span opened deep in the flow is parented to the trace, errors marked', async () => {
    const exported = collecting();
    const tracing = createTracing(on, () => exported, '0.0.0');
    let traceId: string | undefined;
    await startTrace(
      tracing.tracer,
      { name: 'reconcile', attributes: { 'applyset.name': 'a' } },
      async () => {
        traceId = currentTraceId();
        await inSpan('source.fetch', {}, async (notes) => notes.set({ 'source.revision': 'main@sha1:1' }));
        await expect(
          inSpan('kube.request', {}, async () => Promise.reject(new Error('refused'))),
        ).rejects.toThrow('refused');
      },
    );
    await tracing.shutdown();
    const spans = exported.spans;
    const root = spans.find((span) => span.name === 'reconcile');
    const fetch = spans.find((span) => span.name === 'source.fetch');
    const request = spans.find((span) => span.name === 'kube.request');
    expect(root?.spanContext().traceId).toBe(traceId);
    expect(fetch?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(fetch?.attributes['source.revision']).toBe('main@sha1:1');
    expect(request?.status).toEqual({ code: 2, message: 'refused' });
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]));
  });

  it('a trace sampled out records nothing and logs no trace id', async () => {
    const exported = collecting();
    const tracing = createTracing({ ...on, sampler: { kind: 'always_off' } }, () => exported, '0.0.0');
    const seen = await startTrace(tracing.tracer, { name: 'reconcile', attributes: {} }, async () =>
      inSpan('source.fetch', {}, async () => currentTraceId()),
    );
    await tracing.shutdown();
    expect(seen).toBeUndefined();
    expect(exported.spans).toEqual([]);
  });
});

describe('tracingSettingsOf', () => {
  it('is off without an OTLP endpoint, or when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none say so', () => {
    expect(tracingSettingsOf({}, 'pod')).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingSettingsOf({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'pod')).toBeUndefined();
    expect(tracingSettingsOf({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'pod')).toBeUndefined();
  });

  it('adds /v1/traces to the base endpoint and takes the traces endpoint as it is', () => {
    expect(tracingSettingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'pod')).toEqual({
      endpoint: 'http://collector:4318/v1/traces',
      sampler: { kind: 'parentbased_always_on' },
      serviceName: 'applyset-controller',
      instance: 'pod',
    });
    const both = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example:443/otlp',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    };
    expect(tracingSettingsOf(both, 'pod')).toMatchObject({
      endpoint: 'https://traces.example:443/otlp',
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
    });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'jaeger_remote' },
      'OTEL_TRACES_SAMPLER',
    ],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '2',
      },
      'OTEL_TRACES_SAMPLER_ARG=2',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTLP/HTTP only'],
  ])('refuses %j, naming the variable', (env, named) => {
    expect(() => tracingSettingsOf(env, 'pod')).toThrow(named);
  });
});

/**
 * The controller's OpenTelemetry traces (docs/monitoring.md#tracing): a tracer provider of the SDK, its
 * spans batched to an OTLP/HTTP exporter, made only when tracing is on. Off, no provider, exporter or
 * span is made: the reconcile's spans (src/observability/trace-span.ts) then only run their work.
 */
import { ProxyTracerProvider, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

/** Which traces are kept: OTEL_TRACES_SAMPLER's values, with the ratio of OTEL_TRACES_SAMPLER_ARG. */
export type TraceSampler =
  | { readonly kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { readonly kind: 'traceidratio' | 'parentbased_traceidratio'; readonly ratio: number };

/** Tracing on: where spans go and which are kept. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL, `…/v1/traces`. */
  readonly endpoint: string;
  readonly sampler: TraceSampler;
  /** `service.name` of the spans' resource (OTEL_SERVICE_NAME; default applyset-controller). */
  readonly serviceName: string;
  /** `service.instance.id`: the controller's identity (its pod's name). */
  readonly instance: string;
}

/** The controller's tracing: the tracer each reconcile's trace starts with, and its flush at shutdown. */
export interface Tracing {
  /** The SDK's tracer when on; the API's no-op tracer when off (nothing calls it then). */
  readonly tracer: Tracer;
  readonly enabled: boolean;
  /** Sends the spans still batched and closes the exporter; resolves at once when off. */
  shutdown(): Promise<void>;
}

/** The exporter spans go out through, made from the traces URL (src/net/otlp-trace-exporter.ts). */
export type TraceExporterFactory = (endpoint: string) => SpanExporter;

/** Tracing as `settings` say; undefined settings: off, and `exporter` is never called. */
export function createTracing(
  settings: TracingSettings | undefined,
  exporter: TraceExporterFactory,
  version: string,
): Tracing {
  if (settings === undefined) {
    return {
      tracer: new ProxyTracerProvider().getTracer('applyset-controller'),
      enabled: false,
      shutdown: async () => undefined,
    };
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': version,
      'service.instance.id': settings.instance,
    }),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [new BatchSpanProcessor(exporter(settings.endpoint))],
  });
  return {
    tracer: provider.getTracer('applyset-controller', version),
    enabled: true,
    shutdown: () => provider.shutdown(),
  };
}

function samplerOf(sampler: TraceSampler): Sampler {
  switch (sampler.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(sampler.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampler.ratio) });
  }
}

/**
 * The one connection the controller opens for its traces: OpenTelemetry's OTLP/HTTP exporter, posting
 * batches of spans to the collector the deployment names (OTEL_EXPORTER_OTLP_ENDPOINT, the chart's
 * `tracing.endpoint`). It lives in the outbound door because it sends requests; the lint rule that keeps
 * outbound requests in src/net names its package, so nothing else in src/ may import it.
 *
 * Like the controller's own API server, the collector is the operator's choice, not a tenant's: it is
 * reached directly, without the source hosts' address policy or the HTTPS_PROXY of sources, and a dead
 * collector costs only dropped spans (the exporter's own timeout bounds each batch), never a reconcile.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** An exporter posting spans as OTLP/HTTP (JSON) to `endpoint` (the full traces URL). */
export function createOtlpTraceExporter(endpoint: string): SpanExporter {
  return new OTLPTraceExporter({ url: endpoint, httpAgentOptions: { keepAlive: true } });
}

import type { TraceSampler, TracingSettings } from '../observability/tracing.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './parse-command-line.js';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * Tracing as OpenTelemetry's standard variables say (the chart's `tracing.*` values set them): on when
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL as is) or OTEL_EXPORTER_OTLP_ENDPOINT (a base, to
 * which `/v1/traces` is added, as every SDK does) is set, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. Undefined: off. A value the controller cannot honour is a usage error
 * naming the variable, not a controller silently exporting nothing.
 */
export function tracingSettingsOf(env: CliIo['env'], instance: string): TracingSettings | undefined {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporters = value(env, 'OTEL_TRACES_EXPORTER');
  if (exporters === 'none') return undefined;
  if (exporters !== undefined && exporters !== 'otlp') {
    throw new UsageError(
      `OTEL_TRACES_EXPORTER=${exporters}: the controller exports traces only as otlp (or none: off)`,
    );
  }
  const endpoint = endpointOf(env);
  if (endpoint === undefined) return undefined;
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(env, name);
    if (protocol !== undefined && !protocol.startsWith('http/')) {
      throw new UsageError(`${name}=${protocol}: the controller exports traces over OTLP/HTTP only`);
    }
  }
  return {
    endpoint,
    sampler: samplerOf(env),
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? 'applyset-controller',
    instance,
  };
}

function endpointOf(env: CliIo['env']): string | undefined {
  const traces = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces);
  const base = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function checkedUrl(name: string, given: string): string {
  const url = URL.canParse(given) ? new URL(given) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${name}=${given}: not an http:// or https:// URL`);
  }
  return given;
}

function samplerOf(env: CliIo['env']): TraceSampler {
  const kind = value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  const known = SAMPLERS.find((sampler) => sampler === kind);
  if (known === undefined) {
    throw new UsageError(`OTEL_TRACES_SAMPLER=${kind}: the controller knows ${SAMPLERS.join(', ')}`);
  }
  if (known !== 'traceidratio' && known !== 'parentbased_traceidratio') return { kind: known };
  const arg = value(env, 'OTEL_TRACES_SAMPLER_ARG') ?? '1';
  const ratio = Number(arg);
  if (arg.trim() === '' || !Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new UsageError(`OTEL_TRACES_SAMPLER_ARG=${arg}: the ratio of ${known} is a number from 0 to 1`);
  }
  return { kind: known, ratio };
}

function value(env: CliIo['env'], name: string): string | undefined {
  const given = env[name]?.trim();
  return given === undefined || given === '' ? undefined : given;
}

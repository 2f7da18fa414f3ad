/**
 * A real trace backend for tests: Jaeger v2 (an OpenTelemetry Collector distribution), built from its Go
 * module by scripts/build-jaeger.sh, run on 127.0.0.1 with in-memory storage. Spans reach it through its
 * OTLP/HTTP receiver, as from any deployment; the tests read them back through its query API, as the
 * Jaeger UI does. Nothing of it is imitated.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './api-get.js';
import { startProcess, stopProcesses, tail, waitForProcess } from './start-process.js';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const START_TIMEOUT_MS = 60_000;

/** A span as Jaeger's query API (`/api/traces`) gives it. */
export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: readonly { readonly refType: string; readonly spanID: string }[];
  readonly tags: readonly { readonly key: string; readonly value: unknown }[];
}

interface JaegerTrace {
  readonly traceID: string;
  readonly spans: readonly JaegerSpan[];
}

export interface JaegerServer {
  /** The OTLP/HTTP base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly otlpEndpoint: string;
  /** The traces of `service` with a span named `operation` whose tags include `tags`, newest first. */
  findTraces(
    service: string,
    operation: string,
    tags: Readonly<Record<string, string>>,
  ): Promise<JaegerTrace[]>;
  /** Kills Jaeger and removes its temp dir. */
  close(): Promise<void>;
}

/** The jaeger binary scripts/build-jaeger.sh built; a missing build fails the test file. */
async function jaegerBinary(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [path.join(root, 'scripts/build-jaeger.sh'), '--check']);
    return stdout.trim().split('\n').pop() ?? '';
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(`Jaeger is needed by this test and is not built (${detail})`, { cause: error });
  }
}

/**
 * Jaeger v2's configuration: the OTLP/HTTP receiver into in-memory storage, the query API over it, every
 * port on loopback and chosen free (the collector's own metrics off, so no fixed port is taken).
 */
function jaegerConfig(ports: { otlp: number; query: number; queryGrpc: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`;
}

export async function startJaegerServer(): Promise<JaegerServer> {
  const binary = await jaegerBinary();
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'applyset-jaeger-'));
  const ports = { otlp: await freePort(), query: await freePort(), queryGrpc: await freePort() };
  const config = path.join(workDir, 'jaeger.yaml');
  await writeFile(config, jaegerConfig(ports));
  const log = path.join(workDir, 'jaeger.log');
  const child = startProcess(binary, ['--config', config], log, process.pid, {
    PATH: process.env['PATH'],
    HOME: workDir,
  });
  const query = `http://127.0.0.1:${ports.query}`;
  const close = async () => {
    await stopProcesses([child]);
    await rm(workDir, { recursive: true, force: true });
  };
  const exited = () =>
    child.exitCode === null && child.signalCode === null
      ? undefined
      : `exit ${child.exitCode ?? child.signalCode}`;
  try {
    // The query API answers once storage is up; the receiver then takes spans too.
    await waitForProcess(
      'jaeger',
      async () => (await fetch(`${query}/api/services`)).ok,
      START_TIMEOUT_MS,
      exited,
    );
  } catch (error) {
    const logTail = await tail(log);
    await close();
    throw new Error(`jaeger did not start: ${String(error)}\n${logTail}`, { cause: error });
  }
  return {
    otlpEndpoint: `http://127.0.0.1:${ports.otlp}`,
    async findTraces(service, operation, tags) {
      const search = new URLSearchParams({
        service,
        operation,
        tags: JSON.stringify(tags),
        lookback: '1h',
        limit: '20',
      });
      const response = await fetch(`${query}/api/traces?${search.toString()}`);
      const text = await response.text();
      if (!response.ok) throw new Error(`jaeger GET /api/traces: HTTP ${response.status}: ${text}`);
      return (JSON.parse(text) as { data: JaegerTrace[] | null }).data ?? [];
    },
    close,
  };
}

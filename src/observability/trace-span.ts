/**
 * The spans of one reconcile, parented through the async flow that runs it. A reconcile's root span
 * (startTrace, from src/observability/tracing.ts) puts its tracer and context in an AsyncLocalStorage;
 * every step beneath it (the source fetch in src/source/, a wave of the engine in src/apply/, a request
 * of the kube client in src/kube/) calls inSpan, which opens a child of whatever span is current. Outside
 * a traced reconcile (tracing off, a trace sampled out, an informer's watch, the Lease) there is nothing
 * in the storage and inSpan only runs its work: no span is made, no tracer is asked.
 *
 * The storage is the one piece of module state here, in the role OpenTelemetry's context manager plays,
 * but holding no global provider: the tracer travels with the trace that was started with it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Step } from '../api/reconcile-outcome.js';
import { messageOf } from '../errors/message-of.js';

interface ActiveTrace {
  readonly tracer: Tracer;
  readonly context: Context;
}

const active = new AsyncLocalStorage<ActiveTrace>();

/** What a step may add to its span once it knows more (the revision fetched, the status written). */
export interface SpanNotes {
  set(attributes: Attributes): void;
  /** The step ended in an outcome that stops the run (not a throw): the span shows it as an error. */
  fail(message: string): void;
}

const NO_NOTES: SpanNotes = { set: () => undefined, fail: () => undefined };

/**
 * Runs `work` in a span named `name`, a child of the current span, ended when the work settles (an
 * error marks it, with its message). Without a current traced span it only runs the work.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (notes: SpanNotes) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const current = active.getStore();
  if (current === undefined) return work(NO_NOTES);
  return runSpan(current.tracer, current.context, { name, attributes, kind }, work);
}

/**
 * Starts a trace: `work` runs in a root span made by `tracer`, and every inSpan beneath it opens a child.
 * A span the sampler dropped records nothing, and its children are not made either.
 */
export function startTrace<T>(
  tracer: Tracer,
  root: { readonly name: string; readonly attributes: Attributes },
  work: (notes: SpanNotes) => Promise<T>,
): Promise<T> {
  return runSpan(tracer, ROOT_CONTEXT, { ...root, kind: SpanKind.INTERNAL }, work);
}

/** Marks the span failed when `step` ended the run in an outcome other than applied. */
export function noteStep(notes: SpanNotes, step: Step<unknown>): void {
  if ('done' in step && step.done.kind !== 'applied') notes.fail(`${step.done.reason}: ${step.done.message}`);
}

/** The current trace's id, for the reconcile's log lines; undefined outside a recorded trace. */
export function currentTraceId(): string | undefined {
  const current = active.getStore();
  if (current === undefined) return undefined;
  return trace.getSpanContext(current.context)?.traceId;
}

function runSpan<T>(
  tracer: Tracer,
  parent: Context,
  what: { readonly name: string; readonly attributes: Attributes; readonly kind: SpanKind },
  work: (notes: SpanNotes) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(what.name, { attributes: what.attributes, kind: what.kind }, parent);
  if (!span.isRecording()) {
    span.end();
    return active.exit(() => work(NO_NOTES));
  }
  const context = trace.setSpan(parent, span);
  const notes: SpanNotes = {
    set: (attributes) => span.setAttributes(attributes),
    fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
  };
  return active.run({ tracer, context }, async () => {
    try {
      return await work(notes);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function failed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
  if (error instanceof Error) span.recordException(error);
}

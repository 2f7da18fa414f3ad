import type { ServerResponse } from 'node:http';
import type { UiViewer } from './ui-access.js';
import type { UiChange, UiData } from './ui-data.js';
import { securityHeaders } from './ui-http.js';

/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 25_000;

interface Listener {
  readonly viewer: UiViewer;
  readonly response: ServerResponse;
}

export interface UiUpdates {
  /** Streams changes the viewer may read to `response` as server-sent events until it closes. */
  open(viewer: UiViewer, response: ServerResponse): void;
  /** Ends every open stream and the subscription. */
  close(): void;
}

/**
 * One subscription to the data source for every open page: each change is passed to the streams whose
 * viewer may get its ApplySet (its namespace, or that one by name), as `event: change` with
 * `{namespace, name}`. Pages refetch what they show themselves, so the stream carries no ApplySet
 * content.
 */
export function createUiUpdates(data: UiData): UiUpdates {
  const listeners = new Set<Listener>();
  let unsubscribe: (() => void) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;

  const deliver = (change: UiChange) => {
    const line = `event: change\ndata: ${JSON.stringify({ namespace: change.namespace, name: change.name })}\n\n`;
    for (const listener of listeners) {
      listener.viewer.mayRead(change.namespace, change.name).then(
        (allowed) => {
          if (allowed && !listener.response.writableEnded) listener.response.write(line);
        },
        () => undefined,
      );
    }
  };

  const stopIfIdle = () => {
    if (listeners.size > 0) return;
    unsubscribe?.();
    unsubscribe = undefined;
    clearInterval(keepAlive);
    keepAlive = undefined;
  };

  return {
    open(viewer, response) {
      response.writeHead(200, {
        ...securityHeaders(),
        'Content-Type': 'text/event-stream; charset=utf-8',
        Connection: 'keep-alive',
      });
      response.write(': connected\n\n');
      const listener = { viewer, response };
      listeners.add(listener);
      unsubscribe ??= data.subscribe(deliver);
      keepAlive ??= setInterval(() => {
        for (const { response: open } of listeners) open.write(': keep-alive\n\n');
      }, KEEP_ALIVE_MS);
      response.on('close', () => {
        listeners.delete(listener);
        stopIfIdle();
      });
    },
    close() {
      for (const { response } of listeners) response.end();
      listeners.clear();
      stopIfIdle();
    },
  };
}

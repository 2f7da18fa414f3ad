import { LruMap } from '../kube/lru-map.js';

/**
 * Single flight: one fetch per key (repository, ref, credentials) at a time, shared by every caller.
 * A finished one is kept, so a caller that accepts its age gets its answer without a round trip; a
 * failed one is never handed to a later caller, who fetches again. At most `maxFlights` are kept,
 * the least recently joined dropped first: keys name credentials too, so a rotated Secret adds one.
 */
export interface FetchFlights<T> {
  /** The flight of `key` if one is running or finished less than `maxAgeMs` ago, else a new one. */
  join(key: string, maxAgeMs: number, start: () => Promise<T>): Promise<T>;
}

interface Flight<T> {
  readonly result: Promise<T>;
  /** When it succeeded, by the source's clock; undefined while it runs. */
  settledAt?: number;
}

export function createFetchFlights<T>(now: () => number, maxFlights = 10_000): FetchFlights<T> {
  const flights = new LruMap<string, Flight<T>>(maxFlights);
  return {
    join(key, maxAgeMs, start) {
      const previous = flights.get(key);
      if (
        previous !== undefined &&
        (previous.settledAt === undefined || now() - previous.settledAt < maxAgeMs)
      ) {
        return previous.result;
      }
      const started: Flight<T> = { result: start() };
      flights.set(key, started);
      started.result.then(
        () => {
          started.settledAt = now();
        },
        () => {
          if (flights.peek(key) === started) flights.delete(key);
        },
      );
      return started.result;
    },
  };
}

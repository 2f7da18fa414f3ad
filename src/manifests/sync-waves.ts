/**
 * Sync waves (docs/hooks.md#waves): the order a set's author writes on its objects, as Argo CD's sync
 * waves. `applyset.dev/wave`, else `argocd.argoproj.io/sync-wave` (so a repository moved from Argo CD
 * keeps its order), an integer; none (or one that is not an integer) is wave 0. Each wave is applied,
 * then awaited healthy, before the next; prunes go in the reverse order. Inside a wave the kind order
 * of apply-waves.ts still holds.
 */
import type { JsonObject } from './json-value.js';
import { manifestAnnotations } from './manifest-annotations.js';

const WAVE_ANNOTATION = 'applyset.dev/wave';
const ARGO_SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** The object's sync wave: its annotation's integer, else 0. */
export function syncWaveOf(object: JsonObject | undefined): number {
  if (object === undefined) return 0;
  const annotations = manifestAnnotations(object);
  const text = annotations[WAVE_ANNOTATION] ?? annotations[ARGO_SYNC_WAVE_ANNOTATION];
  if (text === undefined) return 0;
  const trimmed = text.trim();
  return /^[-+]?\d{1,9}$/.test(trimmed) ? Number(trimmed) : 0;
}

/** Items grouped by their sync wave, the waves in ascending order, the input order kept inside one. */
export function groupIntoSyncWaves<T>(
  items: readonly T[],
  waveOf: (item: T) => number,
): { wave: number; items: T[] }[] {
  const byWave = new Map<number, T[]>();
  for (const item of items) {
    const wave = waveOf(item);
    const group = byWave.get(wave);
    if (group === undefined) byWave.set(wave, [item]);
    else group.push(item);
  }
  return [...byWave.entries()].sort(([a], [b]) => a - b).map(([wave, group]) => ({ wave, items: group }));
}

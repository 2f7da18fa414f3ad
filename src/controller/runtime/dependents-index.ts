import { dependencyKeysOf, readinessProblem } from '../../api/dependencies.js';
import type { ApplySet } from '../../api/applyset-types.js';
import type { InformerEvent } from '../../kube/informer-cache.js';
import { applySetKey } from './watched-applyset.js';

/**
 * Which ApplySets name which in spec.dependsOn, kept up to date from the informer's events, so that an
 * ApplySet's change finds those waiting for it without reading the whole fleet. Read from the list on
 * each event, that cost grew with the fleet on every event: 10,000 ApplySets, each added and made Ready,
 * read 10,000 specs 30,000 times.
 */
export interface DependentsIndex {
  /**
   * Takes the event's ApplySet in (its dependsOn now, or none once deleted) and answers the keys of
   * those whose dependsOn names it, when the event may change what they decide: it appeared, went, or
   * its readiness changed (Ready, its reason, the generation observed, a new generation). Any other
   * write of it, such as a new message, wakes nobody.
   */
  dependentsToWake(event: InformerEvent): string[];
}

export function createDependentsIndex(): DependentsIndex {
  // Both ways: who waits for a key, and what a key waits for (to take its old entries out).
  const waitingFor = new Map<string, Set<string>>();
  const dependsOn = new Map<string, readonly string[]>();

  const record = (key: string, dependencies: readonly string[]) => {
    for (const dependency of dependsOn.get(key) ?? []) {
      const waiting = waitingFor.get(dependency);
      waiting?.delete(key);
      if (waiting?.size === 0) waitingFor.delete(dependency);
    }
    if (dependencies.length === 0) dependsOn.delete(key);
    else dependsOn.set(key, dependencies);
    for (const dependency of dependencies) {
      let waiting = waitingFor.get(dependency);
      if (waiting === undefined) waitingFor.set(dependency, (waiting = new Set()));
      waiting.add(key);
    }
  };

  return {
    dependentsToWake(event) {
      const key = applySetKey(event.object);
      const applySet = event.object as unknown as ApplySet;
      record(key, event.type === 'deleted' ? [] : dependencyKeysOf(applySet));
      if (
        event.type === 'modified' &&
        event.previous !== undefined &&
        readinessProblem(event.previous as unknown as ApplySet) === readinessProblem(applySet)
      )
        return [];
      return [...(waitingFor.get(key) ?? [])];
    },
  };
}

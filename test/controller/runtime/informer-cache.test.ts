import { createInformerCache } from '../../../src/kube/informer-cache.js';
import type { InformerEvent } from '../../../src/kube/informer-cache.js';
import { applySetKey } from '../../../src/controller/runtime/watched-applyset.js';

describe('createInformerCache', () => {
  const applySet = (name: string, resourceVersion: string) => ({
    metadata: { name, namespace: 'team', resourceVersion },
  });

  it('finds an object by the work queue key of it, as the last event left it', () => {
    const events: InformerEvent[] = [];
    const cache = createInformerCache((event) => events.push(event));
    cache.replaceAll([applySet('web', '1'), applySet('db', '1')]);
    cache.applyWatchEvent('MODIFIED', applySet('web', '2'));
    expect(cache.get(applySetKey(applySet('web', '2')))).toEqual(applySet('web', '2'));
    expect(cache.get('team/db')).toEqual(applySet('db', '1'));
    cache.applyWatchEvent('DELETED', applySet('db', '1'));
    expect(cache.get('team/db')).toBeUndefined();
    expect(cache.get('other/web')).toBeUndefined();
    expect(events.map((event) => event.type)).toEqual(['added', 'added', 'modified', 'deleted']);
  });

  it('keys a cluster-scoped object by its name alone', () => {
    const cache = createInformerCache(() => undefined);
    cache.applyWatchEvent('ADDED', { metadata: { name: 'wide', resourceVersion: '1' } });
    expect(cache.get('/wide')?.['metadata']).toEqual({ name: 'wide', resourceVersion: '1' });
  });
});

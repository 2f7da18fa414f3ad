import type { ResourceLocation } from '../kube/kube-object-api.js';
import type { RunContext } from './run-context.js';

/**
 * DELETE with background propagation, as kubectl does, and a uid precondition when the uid is known:
 * delete exactly the object whose ownership was checked, not one recreated since.
 */
export async function deleteExactly(
  context: Pick<RunContext, 'api'> & { readonly signal: AbortSignal | undefined },
  location: ResourceLocation,
  name: string,
  uid: string | undefined,
): Promise<void> {
  await context.api.delete(
    location,
    name,
    { propagationPolicy: 'Background', ...(uid === undefined ? {} : { uid }) },
    context.signal,
  );
}

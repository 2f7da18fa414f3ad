import type { ApplySet } from '../api/applyset-types.js';
import { formatPreviewText } from '../preview/format-preview.js';
import { previewApplySet, type PreviewAccess, type PreviewRequest } from '../preview/preview-applyset.js';
import { PreviewRefusedError } from '../preview/preview-refused-error.js';
import type { UiPreview } from './ui-data.js';

/**
 * The ApplySet page's "what the next run would change": the preview `applyset diff --applyset-object`
 * computes (the reconcile's own steps, the engine in dry run as the ApplySet's account) for the set's
 * own ref, as its text. A preview the caller may not compute (they may not act as the account) says so.
 */
export function uiPreviewOf(
  access: PreviewAccess,
  options: Pick<PreviewRequest, 'defaultServiceAccountName' | 'kustomize' | 'allowCrossNamespaceRefs'> = {},
): (applySet: ApplySet, signal: AbortSignal) => Promise<UiPreview> {
  return async (applySet, signal) => {
    try {
      const preview = await previewApplySet({
        namespace: applySet.metadata.namespace,
        name: applySet.metadata.name,
        source: { kind: 'applyset-ref' },
        access,
        ...options,
        signal,
      });
      // A preview that failed says why, never counts that would read as "nothing would change".
      if (preview.failed === true)
        return { kind: 'unavailable', reason: `No preview: ${formatPreviewText(preview).trimEnd()}` };
      const [summary = '', ...lines] = formatPreviewText(preview).trimEnd().split('\n');
      return { kind: 'changes', summary, diff: lines.join('\n') };
    } catch (error) {
      if (!(error instanceof PreviewRefusedError)) throw error;
      return { kind: 'unavailable', reason: `No preview: ${error.message}` };
    }
  };
}

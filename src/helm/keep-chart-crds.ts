/**
 * The objects of a chart's `crds/` directory are kept when they leave the render, as `helm upgrade`
 * keeps them (docs/helm.md#crds): deleting a CustomResourceDefinition deletes every resource of its
 * kind in the cluster, so a chart bump that drops one, or `includeCRDs: false`, must not do that. Each
 * is marked `applyset.dev/prune: disabled`, the mark every pruner of ours reads on the live object,
 * unless `spec.helm.pruneCRDs` asks for them to be pruned like the rest.
 *
 * helm prints each file of `crds/` (the chart's and its subcharts') first, as
 * `---\n# Source: <chart>/crds/<file>\n<the file>`; the documents of those sections are decoded, marked and
 * written back as JSON (which is YAML), the rest of the render is left as helm printed it.
 */
import { decodeDocuments, type DecodeLimits } from '../manifests/decode-documents.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../manifests/json-value.js';
import { stringifyJson } from '../manifests/lossless-json.js';
import { MetadataKeys, PRUNE_DISABLED } from '../inventory/metadata-keys.js';

/** Where a section of helm's output came from: its `# Source:` line, undefined without one. */
function sourceOf(section: string): string | undefined {
  return /^---\n# Source: ([^\n]+)\n/.exec(section)?.[1];
}

/**
 * Whether helm's `# Source:` path is a file of a chart's `crds/`: `<chart>/crds/…` or
 * `<chart>/charts/<sub>/crds/…`, not a template under a folder that happens to be called crds.
 * @internal Tests check the paths.
 */
export function isChartCrdsPath(source: string): boolean {
  const segments = source.split('/');
  return segments.some(
    (segment, index) =>
      segment === 'crds' &&
      index < segments.length - 1 &&
      (index === 1 || segments[index - 2] === 'charts') &&
      !segments.slice(0, index).includes('templates'),
  );
}

/**
 * helm's output with every object of a `crds/` section marked to be kept. A section that does not
 * decode is left as it is: the set's decoder reports it, naming the render, as for any other section.
 */
export function keepChartCrds(text: string, label: string, limits: DecodeLimits): string {
  const sections = text.split(/^(?=---\n# Source: )/m);
  let changed = false;
  const out = sections.map((section) => {
    const source = sourceOf(section);
    if (source === undefined || !isChartCrdsPath(source)) return section;
    let documents;
    try {
      documents = decodeDocuments(section, `${label} (${source})`, limits);
    } catch {
      return section;
    }
    changed = true;
    const written = documents
      .filter((document) => document.value !== null)
      .map((document) => stringifyJson(markKept(document.value)));
    return `---\n# Source: ${source}\n${written.join('\n---\n')}\n`;
  });
  return changed ? out.join('') : text;
}

/** The object (or each item of a List) with `applyset.dev/prune: disabled` among its annotations. */
function markKept(value: JsonValue): JsonValue {
  if (!isJsonObject(value)) return value;
  const items = value['items'];
  if (typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(items)) {
    return { ...value, items: items.map(markKept) };
  }
  const metadata = isJsonObject(value['metadata']) ? value['metadata'] : {};
  const annotations: JsonObject = isJsonObject(metadata['annotations']) ? metadata['annotations'] : {};
  return {
    ...value,
    metadata: { ...metadata, annotations: { ...annotations, [MetadataKeys.prune]: PRUNE_DISABLED } },
  };
}

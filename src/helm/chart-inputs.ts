import type { ClusterCapabilities } from '../kube/cluster-capabilities.js';
import type { ValuesFromDocument } from './values-from-document.js';

/**
 * What a chart's render takes from the cluster rather than from the source: the values of
 * spec.helm.valuesFrom (read as the ApplySet's account before the render), and the capabilities of
 * the cluster the set applies to.
 */
export interface ChartInputs {
  /** In the order of spec.helm.valuesFrom, those skipped as optional left out. */
  readonly valuesFrom: readonly ValuesFromDocument[];
  /**
   * The target cluster's version and API versions, asked only when a chart is rendered (read-only, from
   * a cache); undefined: helm's built-in defaults (the CLI's offline renders).
   */
  readonly capabilities?: () => Promise<ClusterCapabilities>;
}

/** `spec.helm.valuesFrom` (docs/helm.md#values-from-configmaps-and-secrets), as stored and resolved. */

/** One entry of `spec.helm.valuesFrom`: Flux's HelmRelease shape. */
export interface HelmValuesReference {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  /** The data key holding the values; default `values.yaml`. */
  readonly valuesKey?: string;
  /** A dotted path the key's whole value is set at, rather than merged at the root. */
  readonly targetPath?: string;
  /** A missing object or key is skipped rather than stalling the set; default false. */
  readonly optional?: boolean;
}

/** One `spec.helm.valuesFrom` entry with its defaults. */
export interface ResolvedValuesReference {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  readonly valuesKey: string;
  /** The keys of targetPath, outermost first; undefined: the values are merged at the root. */
  readonly targetPath: readonly string[] | undefined;
  readonly optional: boolean;
}

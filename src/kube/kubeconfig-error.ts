/** The error of a kubeconfig that cannot be used; loadKubeConfig re-exports it. */

/** The kubeconfig could not be read or names no cluster. Stalled: the user must fix the flag or file. */
export class KubeConfigError extends Error {
  override readonly name: string = 'KubeConfigError';
  readonly code = 'KUBECONFIG_INVALID';
  readonly intent = 'stalled';
}

/** A local control plane that could not be built, started or reached. */
export class ControlPlaneError extends Error {
  override readonly name = 'ControlPlaneError';
  readonly code = 'CONTROL_PLANE';
}

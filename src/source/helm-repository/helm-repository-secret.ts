/**
 * What a Helm repository's spec.source.secretRef Secret holds, as Flux reads a HelmRepository's
 * secretRef: Basic credentials (`username` and `password`, helm repo add's), TLS material (`ca.crt`,
 * `tls.crt`, `tls.key`), or both. A Secret with only TLS material is for a repository that needs no
 * credentials; spec.source.certSecretRef's material is used over this one's.
 */
import type { FoundSecret } from '../../kube/applyset-api.js';
import { parseSourceHostList, SOURCE_HOSTS_ANNOTATION } from '../../net/host-list.js';
import type { TlsMaterial } from '../../net/outbound-tls.js';
import { tlsMaterialOf } from '../tls-material-of.js';
import type { HelmRepositoryCredentials } from './helm-repository-source.js';

export interface HelmRepositorySecret {
  readonly basic?: HelmRepositoryCredentials;
  readonly tls?: TlsMaterial;
}

export function helmRepositorySecretOf(
  { data, annotations }: FoundSecret,
  from: string,
): { credentials: HelmRepositorySecret } | { problem: string } {
  const material = tlsMaterialOf(data);
  if ('problem' in material) return material;
  const tls = material.tls === undefined ? {} : { tls: material.tls };
  const { username, password } = data;
  if (username === undefined || password === undefined) {
    return material.tls === undefined
      ? {
          problem:
            'has no username and password (the Basic credentials of a Helm repository), nor ca.crt, tls.crt and tls.key',
        }
      : { credentials: tls };
  }
  const hostList = annotations[SOURCE_HOSTS_ANNOTATION];
  const basic = {
    username,
    password,
    from,
    ...(hostList === undefined ? {} : { hosts: parseSourceHostList(hostList) }),
  };
  return { credentials: { basic, ...tls } };
}

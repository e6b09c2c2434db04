// The pre-flight check's inputs (docs/preflight.md): `preflight` (on by default), `preflight-image`
// (default: `verify-image`) and `registry-ca-file`; and which hosts the check asks, from the auth
// patch. Pure: the CA file is read by the shell (src/action/inputs.ts). Its own file so config.ts
// only spreads it in.
import type { HostCredential } from './authPatch.js';
import { InputError } from './errors.js';
import { parseImageRef, registryApiHost, type ImageRef } from './imageRef.js';

export interface PreflightConfig {
  /** false: `preflight: false`, no request to any registry */
  preflight: boolean;
  /** the reference whose manifest the check HEADs, and the input it came from; undefined: the /v2/ login alone */
  preflightImage?: ImageRef & { input: 'preflight-image' | 'verify-image' };
  /** a PEM bundle added to Node's default CAs for the registry requests */
  registryCaFile?: string;
}

export function readPreflightInputs(str: (name: string) => string, booleans: ReadonlyMap<string, boolean>): PreflightConfig {
  const preflight = booleans.get(str('preflight') || 'true');
  if (preflight === undefined) throw new InputError('preflight', `"${str('preflight')}" is not true or false`);
  const registryCaFile = str('registry-ca-file') || undefined;
  if (!preflight) return { preflight, registryCaFile };
  const input = str('preflight-image') ? 'preflight-image' : str('verify-image') ? 'verify-image' : undefined;
  return {
    preflight,
    preflightImage: input ? { ...parseImageRef(input, str(input)), input } : undefined,
    registryCaFile,
  };
}

/** One host the check asks: its credential (a secret) and, for the image's host, the manifest to HEAD. */
export interface PreflightTarget {
  /** as the auth patch names it */
  host: string;
  /** the host dialed (docker.io: registry-1.docker.io) */
  apiHost: string;
  credential: HostCredential['fields'];
  image?: ImageRef;
}

/**
 * Every host the patch carries a credential for; the image's host gets its manifest HEAD. An image
 * on a host the patch has no credential for is an InputError: the check would prove nothing about
 * the new credential.
 */
export function preflightTargets(config: PreflightConfig, credentials: readonly HostCredential[]): PreflightTarget[] {
  if (!config.preflight) return [];
  const image = config.preflightImage;
  const sameHost = (a: string, b: string) => registryApiHost(a) === registryApiHost(b);
  if (image && !credentials.some((c) => sameHost(c.host, image.host))) {
    throw new InputError(
      image.input,
      `"${image.text}" is on ${image.host}, a host the auth patch carries no credential for (it has: ${credentials.map((c) => c.host).join(', ')}); name an image of one of those hosts for the pre-flight check${image.input === 'verify-image' ? ' with preflight-image' : ''}, or set preflight: false`,
    );
  }
  return credentials.map((c) => ({
    host: c.host,
    apiHost: registryApiHost(c.host),
    credential: c.fields,
    image: image && sameHost(c.host, image.host) ? image : undefined,
  }));
}

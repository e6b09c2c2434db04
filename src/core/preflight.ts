// The pre-flight check's inputs (docs/preflight.md): `preflight` (on by default), `preflight-image`
// (default: `verify-image`), `registry-ca-file` and `registry-plain-http`; and which hosts the check
// asks, from the auth patch. Pure: the CA file is read by the shell (src/action/inputs.ts). Its own file so config.ts
// only spreads it in.
import type { HostCredential } from './authPatch.js';
import { InputError } from './errors.js';
import { parseImageRef, registryApiHost, type ImageRef } from './imageRef.js';

export interface PreflightConfig {
  /** false: `preflight: false`, no request to any registry */
  preflight: boolean;
  /** the reference whose manifest the check HEADs, and the input it came from; undefined: the /v2/ login alone */
  preflightImage?: ImageRef & { input: 'preflight-image' | 'verify-image' };
  /** a PEM bundle added to Node's default CAs for the registry requests (its path: read when a request is about to be made) */
  registryCaFile?: string;
  /**
   * `registry-plain-http`: hosts of the auth patch the user serves over plain http (`registry.local:5000`),
   * asked over http; only to such a host's own origin may the credential travel in clear text
   * (core/credentialRoute.ts)
   */
  registryPlainHttp?: string[];
}

export function readPreflightInputs(str: (name: string) => string, booleans: ReadonlyMap<string, boolean>): PreflightConfig {
  const preflight = booleans.get(str('preflight') || 'true');
  if (preflight === undefined) throw new InputError('preflight', `"${str('preflight')}" is not true or false`);
  const registryCaFile = str('registry-ca-file') || undefined;
  const registryPlainHttp = [
    ...new Set(
      str('registry-plain-http')
        .split(/[,\n]/)
        .map((h) => h.trim())
        .filter(Boolean),
    ),
  ];
  for (const h of registryPlainHttp) {
    if (h.includes('/')) {
      throw new InputError(
        'registry-plain-http',
        `"${h}" is not a registry host (host or host:port, as the auth patch names it, no scheme or path)`,
      );
    }
  }
  if (!preflight) return { preflight, registryCaFile, registryPlainHttp };
  const input = str('preflight-image') ? 'preflight-image' : str('verify-image') ? 'verify-image' : undefined;
  return {
    preflight,
    preflightImage: input ? { ...parseImageRef(input, str(input)), input } : undefined,
    registryCaFile,
    registryPlainHttp,
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
  /** named in `registry-plain-http`: asked over http */
  plainHttp?: boolean;
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
  const plain = config.registryPlainHttp ?? [];
  const unknown = plain.filter((h) => !credentials.some((c) => c.host === h));
  if (unknown.length > 0) {
    throw new InputError(
      'registry-plain-http',
      `${unknown.join(', ')}: not a host the auth patch carries a credential for (it has: ${credentials.map((c) => c.host).join(', ')}); name a host as the patch names it`,
    );
  }
  return credentials.map((c) => ({
    host: c.host,
    apiHost: registryApiHost(c.host),
    credential: c.fields,
    image: image && sameHost(c.host, image.host) ? image : undefined,
    ...(plain.includes(c.host) ? { plainHttp: true } : {}),
  }));
}

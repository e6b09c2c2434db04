// An image reference as the pre-flight check asks a registry for it: which host serves it (as the
// auth patch names it, and the host dialed), which repository, which tag or digest. Pure; a bad
// reference is an InputError naming the input it came from.
//
// The grammar is distribution/reference's (reference.go: `[domain/]path[:tag][@digest]`, a domain
// being the first component when it has a `.` or a `:` or is `localhost`), and Docker Hub's short
// names as docker and containerd normalize them: `nginx` is `docker.io/library/nginx:latest`, and
// docker.io is served at `registry-1.docker.io` (containerd's docker.DefaultHost, as in the cri config).
import { InputError } from './errors.js';

export interface ImageRef {
  /** the registry host as a credential names it (`ghcr.io`, `docker.io`, `127.0.0.1:5000`) */
  host: string;
  /** the host the registry API is dialed at (`registry-1.docker.io` for docker.io) */
  apiHost: string;
  /** the repository path (`org/app`, `library/nginx`) */
  repository: string;
  /** the tag or the digest the manifest HEAD asks for */
  reference: string;
  /** the reference as the user wrote it */
  text: string;
}

// reference.go: path components are lowercase alphanumerics joined by one `.`, one or two `_`, or dashes
const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const DOMAIN =
  /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)(?::\d{1,5})?$/;

/** The API host of a registry host: Docker Hub's names are served at registry-1.docker.io. */
export function registryApiHost(host: string): string {
  return host === 'docker.io' || host === 'index.docker.io' ? 'registry-1.docker.io' : host;
}

const FORMAT = 'expected [registry/]repository[:tag][@sha256:digest], e.g. ghcr.io/org/app:1.2 or nginx';

/** Parse `text` (the value of `input`) into an ImageRef; InputError naming `input` when it is no image reference. */
export function parseImageRef(input: string, text: string): ImageRef {
  const bad = (why: string) => new InputError(input, `"${text}" is not an image reference: ${why} (${FORMAT})`);
  const t = text.trim();
  if (!t || /\s/.test(t)) throw bad('it is empty or holds white space');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) throw bad('give the reference without a scheme');
  const at = t.indexOf('@');
  const digest = at < 0 ? undefined : t.slice(at + 1);
  const named = at < 0 ? t : t.slice(0, at);
  if (digest !== undefined && !DIGEST.test(digest)) throw bad(`"${digest}" is not a sha256 digest (sha256: and 64 hex digits)`);
  const slash = named.indexOf('/');
  const first = slash < 0 ? '' : named.slice(0, slash);
  const isDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost' || first.startsWith('['));
  let host = isDomain ? first : 'docker.io';
  let rest = isDomain ? named.slice(slash + 1) : named;
  if (host === 'index.docker.io') host = 'docker.io';
  if (isDomain && !DOMAIN.test(host)) throw bad(`"${host}" is not a registry host`);
  // the tag is after the last `:` of the path (a `:` before a `/` belongs to the host, handled above)
  const colon = rest.lastIndexOf(':');
  let tag: string | undefined;
  if (colon >= 0) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`"${tag}" is not a tag`);
  }
  if (!rest) throw bad('it names no repository');
  const parts = rest.split('/');
  for (const p of parts) if (!COMPONENT.test(p)) throw bad(`"${p}" is not a repository path component (lowercase letters, digits, . _ -)`);
  if (host === 'docker.io' && parts.length === 1) rest = `library/${rest}`;
  if (rest.length > 255) throw bad('the repository name is longer than 255 characters');
  return { host, apiHost: registryApiHost(host), repository: rest, reference: digest ?? tag ?? 'latest', text: t };
}

/** The reference as asked: `repository:tag` or `repository@digest`. */
export function refLabel(ref: Pick<ImageRef, 'repository' | 'reference'>): string {
  return `${ref.repository}${ref.reference.startsWith('sha256:') ? '@' : ':'}${ref.reference}`;
}

// What a registry's answers to the pre-flight check mean (docs/preflight.md): the credential works
// (`ok`, and whether a pull or only a login was proven), the registry said no (`refused`: the token
// endpoint rejected the credential, or the scope or the manifest was refused: 401/403/404), the token
// endpoint does not serve the request containerd would send for this credential (`unsupported`:
// 400/404/405 there, after containerd's fallback from the POST to the GET), it could not be asked (`unreachable`: no answer, TLS, a timeout, a 5xx or 429, an API this check does
// not speak), or the check refused to send the credential where the registry sent it (`withheld`: a
// plain-http token realm or redirect, core/credentialRoute.ts). Plain data in, a verdict out.
import type { PreflightStop, PreflightVerdict, RegistryCheck, RegistryExchange } from '../core/model/preflight.js';

/** What the registry answered, in one line (no secret: the adapter records none). */
export function answeredText(x: RegistryExchange): string {
  if (x.withheld !== undefined) return `not sent: ${x.withheld.reason}`;
  if (x.failure !== undefined) return x.failure;
  if (x.status === undefined) return x.registryError ?? 'nothing';
  return `${x.status}${x.statusText ? ` ${x.statusText}` : ''}${x.registryError ? `: ${x.registryError}` : ''}`;
}

/** A token endpoint's answers that say it does not serve the request, not that the credential is wrong. */
const TOKEN_UNSUPPORTED: readonly number[] = [400, 404, 405];

export function judgePreflight(check: RegistryCheck): PreflightVerdict {
  const { host } = check;
  const last = check.exchanges[check.exchanges.length - 1];
  if (!last) return { verdict: 'unreachable', host, asked: 'nothing', answered: 'the check asked nothing' };
  const no = (verdict: PreflightStop): PreflightVerdict => ({
    verdict,
    host,
    asked: last.asked,
    answered: answeredText(last),
    ...(last.withheld ? { fix: last.withheld.fix } : {}),
  });
  // nothing was sent: the credential would have gone where it may not (a plain-http realm, …)
  if (last.withheld !== undefined) return no('withheld');
  if (last.failure !== undefined) return no('unreachable');
  // asked nothing of the registry: the credential has nothing the challenge can use
  if (last.status === undefined) return no('refused');
  const status = last.status;
  if (status >= 500 || status === 429) return no('unreachable');
  if (last.unusable) return no('unreachable');
  const ok = status >= 200 && status < 300;
  switch (last.step) {
    case 'ping':
      // 200 with no image: the registry asks for no credential; a 401 ends here only with a challenge
      // this check cannot answer, anything else is not a registry's v2 API
      return ok ? { verdict: 'ok', host, proves: 'none', what: 'GET /v2/ (the registry asks for no credential)' } : no('unreachable');
    case 'token':
      if (ok) return { verdict: 'ok', host, proves: 'login', what: 'token flow, login only' };
      // a bad request, no such endpoint, or not this method: the endpoint did not judge the credential
      return no(TOKEN_UNSUPPORTED.includes(status) ? 'unsupported' : 'refused');
    case 'login':
      return ok ? { verdict: 'ok', host, proves: 'login', what: 'basic auth at /v2/, login only' } : no('refused');
    case 'manifest': {
      if (!ok) return no('refused');
      const how = check.auth === 'bearer' ? 'token flow' : check.auth === 'basic' ? 'basic auth' : 'no credential asked at /v2/';
      return { verdict: 'ok', host, proves: 'pull', what: `${how} + manifest HEAD of ${check.image ?? 'the image'}` };
    }
  }
}

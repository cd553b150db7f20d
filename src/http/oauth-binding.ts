// Binds an OAuth flow to the browser that started it (review 2026-11-25, M1). GoTrue lets anyone
// holding a `state` finish the flow: an attacker starts one, hands the provider URL (or the
// callback URL) to a victim, and the victim's browser either links the victim's provider account
// into the attacker's user or is signed in as the attacker. Here /authorize (and
// /user/identities/authorize) set an HttpOnly cookie listing the states this browser started,
// and a /callback whose flow hands a session to the browser (the implicit flow) must present it.
// A PKCE flow hands out only a code, useless without the verifier its starter holds; a PKCE
// identity link is completed at that exchange (flows/pkce.ts), so it needs no cookie.
//
// SameSite: Apple answers with a cross-site form POST, which carries only `SameSite=None` cookies,
// and those must be `Secure`: so None + Secure when API_EXTERNAL_URL is https, Lax otherwise (a
// plain-http deployment cannot use Apple, which requires https redirect URIs anyway).
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../app-env.ts';

export const OAUTH_STATE_COOKIE = 'authsvc-oauth-states';
/** Flows one browser may have open at once (tabs); the oldest drop out. */
const MAX_STATES = 5;
const STATE_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function states(c: Context<AppEnv>): string[] {
  const raw = getCookie(c, OAUTH_STATE_COOKIE) ?? '';
  return raw.split('.').filter((s) => STATE_RE.test(s));
}

function write(c: Context<AppEnv>, list: string[]): void {
  const cfg = c.get('deps').config;
  const secure = cfg.api.externalUrl.startsWith('https:');
  setCookie(c, OAUTH_STATE_COOKIE, list.join('.'), {
    path: '/',
    httpOnly: true,
    secure,
    sameSite: secure ? 'None' : 'Lax',
    maxAge: list.length > 0 ? cfg.external.flowStateExpiry : 0,
  });
}

/** /authorize: this browser started the flow `state`. */
export function bindStateToBrowser(c: Context<AppEnv>, state: string): void {
  write(c, [state.toLowerCase(), ...states(c).filter((s) => s !== state.toLowerCase())].slice(0, MAX_STATES));
}

/** /callback: whether this browser started the flow `state`. */
export function browserStarted(c: Context<AppEnv>, state: string | null): boolean {
  return !!state && states(c).includes(state.toLowerCase());
}

/** A finished (or refused) flow leaves the browser's list. */
export function unbindState(c: Context<AppEnv>, state: string): void {
  const list = states(c);
  if (list.includes(state.toLowerCase()))
    write(
      c,
      list.filter((s) => s !== state.toLowerCase()),
    );
}

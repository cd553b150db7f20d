// The OAuth 2.0 legs as GoTrue makes them through golang.org/x/oauth2: the authorize URL
// (AuthCodeURL), the code exchange (RetrieveToken: client credentials as HTTP Basic first, then in
// the form after any failure, remembered per token URL; JSON or form-encoded answers), the refresh
// grant the same way (authsvc's stored provider tokens) and the Bearer-authenticated user-info
// GET (provider.makeRequest).
import type { OAuthContext, OAuthProvider, ProviderSettings, ProviderToken } from './provider.ts';
import { ProviderError, ProviderTimeout, TokenRefusal } from './provider-error.ts';
import { obj, str } from './claims.ts';

/** Go's url.QueryEscape: unreserved bytes kept, space as '+', everything else %XX. */
export function goQueryEscape(s: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's url.Values.Encode: keys sorted, each value escaped; one value per key here. */
export function goEncode(values: Record<string, string>): string {
  return Object.keys(values)
    .sort()
    .map((k) => `${goQueryEscape(k)}=${goQueryEscape(values[k]!)}`)
    .join('&');
}

/** GoTrue: the defaults plus the request's `scopes`, split on commas (oauth2 joins them with spaces). */
export function withRequestScopes(defaults: string[], requested: string): string[] {
  const extra = requested ? requested.split(',') : [];
  return [...defaults, ...extra];
}

export interface AuthCodeUrl {
  authUrl: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string;
  /** AuthCodeOptions: forwarded query parameters and provider extras; later entries win. */
  params?: [string, string][];
}

/** oauth2.Config.AuthCodeURL. */
export function authCodeUrl(a: AuthCodeUrl): string {
  const v: Record<string, string> = { response_type: 'code', client_id: a.clientId };
  if (a.redirectUri) v.redirect_uri = a.redirectUri;
  if (a.scopes.length > 0) v.scope = a.scopes.join(' ');
  if (a.state) v.state = a.state;
  for (const [k, val] of a.params ?? []) v[k] = val;
  return `${a.authUrl}${a.authUrl.includes('?') ? '&' : '?'}${goEncode(v)}`;
}

export type AuthStyle = 'header' | 'params';

/** A token endpoint and how the client authenticates there. */
export interface TokenEndpoint {
  tokenUrl: string;
  settings: ProviderSettings;
  /** Extra form fields (Apple's non-standard `secret`, …). */
  form?: Record<string, string>;
  /** Fixed style; unset means GoTrue's auto-detection (header, then params). */
  authStyle?: AuthStyle;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export interface CodeExchange extends TokenEndpoint {
  code: string;
}

/** oauth2.Config.Exchange with GoTrue's settings. */
export function exchangeCode(ctx: OAuthContext, x: CodeExchange): Promise<ProviderToken> {
  const v: Record<string, string> = { grant_type: 'authorization_code', code: x.code, ...x.form };
  if (x.settings.redirectUri) v.redirect_uri = x.settings.redirectUri;
  return tokenRequest(ctx, x, v, 'token exchange');
}

/** x/oauth2's tokenRefresher (GoTrue never refreshes): the same client authentication as the exchange. */
export function refreshAccessToken(ctx: OAuthContext, x: TokenEndpoint, refreshToken: string): Promise<ProviderToken> {
  return tokenRequest(ctx, x, { grant_type: 'refresh_token', refresh_token: refreshToken, ...x.form }, 'token refresh');
}

/** x/oauth2's RetrieveToken: the style remembered for the token URL, else header and then params. */
async function tokenRequest(
  ctx: OAuthContext,
  x: TokenEndpoint,
  v: Record<string, string>,
  what: string,
): Promise<ProviderToken> {
  const clientId = x.settings.clientIds[0] ?? '';
  const cacheKey = `${x.tokenUrl}\n${clientId}`;
  const known = x.authStyle ?? ctx.authStyles.get(cacheKey);
  const attempt = (style: AuthStyle) => tokenRoundTrip(ctx, x, v, clientId, style, what);
  if (known) return attempt(known);
  try {
    const token = await attempt('header');
    ctx.authStyles.set(cacheKey, 'header');
    return token;
  } catch (err) {
    // x/oauth2 retries after any error; a provider that did not answer in time gets no second
    // request (the budget is spent, and a slow endpoint would only be asked to be slow twice).
    if (err instanceof ProviderTimeout || ctx.signal?.aborted) throw err;
    const token = await attempt('params');
    ctx.authStyles.set(cacheKey, 'params');
    return token;
  }
}

/** A token answer's fields: JSON, or form-encoded (GitHub's default); undefined when it is neither. */
function tokenFields(res: Response, text: string): Record<string, unknown> | undefined {
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' || type === 'text/plain')
    return Object.fromEntries(new URLSearchParams(text));
  try {
    return obj(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** x/oauth2's RetrieveError: the `error` of an answer, with its description (bounded). */
function refusal(raw: Record<string, unknown> | undefined, what: string): TokenRefusal | undefined {
  const error = str(raw?.error);
  if (!error) return undefined;
  return new TokenRefusal(`${what} refused: ${error}`, error.slice(0, 100), str(raw?.error_description).slice(0, 300));
}

async function tokenRoundTrip(
  ctx: OAuthContext,
  x: TokenEndpoint,
  v: Record<string, string>,
  clientId: string,
  style: AuthStyle,
  what: string,
): Promise<ProviderToken> {
  const form = { ...v };
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', ...x.headers };
  if (style === 'params') {
    if (clientId) form.client_id = clientId;
    if (x.settings.secret) form.client_secret = x.settings.secret;
  } else {
    headers.Authorization = `Basic ${btoa(`${goQueryEscape(clientId)}:${goQueryEscape(x.settings.secret)}`)}`;
  }
  const res = await send(ctx, x.tokenUrl, { method: 'POST', headers, body: goEncode(form) }, what);
  const text = await bodyText(res, what);
  const raw = tokenFields(res, text);
  if (res.status < 200 || res.status > 299)
    throw refusal(raw, what) ?? new ProviderError(`${what} answered HTTP ${res.status}`);
  if (!raw) throw new ProviderError(`${what} answered a body that is not JSON`);
  const refused = refusal(raw, what);
  if (refused) throw refused;
  const accessToken = str(raw.access_token);
  if (!accessToken) throw new ProviderError(`${what} answer has no access_token`);
  const expiresIn = lifetime(raw.expires_in);
  return {
    accessToken,
    refreshToken: str(raw.refresh_token) || undefined,
    idToken: str(raw.id_token) || undefined,
    ...(expiresIn === undefined ? {} : { expiresIn }),
    raw,
  };
}

/** `expires_in` as x/oauth2's expirationTime reads it: a number, or a string of digits (PayPal, form answers). */
function lifetime(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.floor(v);
  if (typeof v === 'string' && /^\d{1,10}$/.test(v)) return Number(v);
  return undefined;
}

export type CallContext = Pick<OAuthContext, 'fetch' | 'timeoutMs' | 'signal' | 'userAgent'>;

/**
 * A request to a provider: our User-Agent, bounded by the per-request timeout and the flow's
 * budget (the signal covers the body too). Network failures become ProviderError, running out
 * of time ProviderTimeout.
 */
export async function send(ctx: CallContext, url: string, init: RequestInit, what: string): Promise<Response> {
  if (ctx.signal?.aborted) throw new ProviderTimeout(`${what} not sent: no time left`);
  const headers = new Headers(init.headers);
  headers.set('User-Agent', ctx.userAgent);
  const own = AbortSignal.timeout(ctx.timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, own]) : own;
  try {
    return await ctx.fetch(url, { ...init, headers, signal });
  } catch (err) {
    if (signal.aborted) throw new ProviderTimeout(`${what} failed: no answer in time`, { cause: err });
    throw new ProviderError(`${what} failed: the request failed`, { cause: err });
  }
}

const MAX_BODY = 1 << 20;

/** The body as text; a timeout while it streams is a ProviderTimeout. */
export async function bodyText(res: Response, what: string): Promise<string> {
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw timedOut
      ? new ProviderTimeout(`${what} failed: no answer in time`, { cause: err })
      : new ProviderError(`${what} failed: the answer broke off`, { cause: err });
  }
  if (text.length > MAX_BODY) throw new ProviderError(`${what}: answer over 1 MiB`);
  return text;
}

/** provider.makeRequest: GET with the Bearer token, any non-2xx is an error, the body is JSON. */
export async function getJson(
  ctx: OAuthContext,
  url: string,
  accessToken: string,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await send(
    ctx,
    url,
    { method: 'GET', headers: { Authorization: `Bearer ${accessToken}`, ...headers } },
    'user info request',
  );
  const text = await bodyText(res, 'user info request');
  if (res.status < 200 || res.status >= 300) throw new ProviderError(`user info request answered HTTP ${res.status}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderError('user info answer is not JSON');
  }
}

/** GoTrue's chooseHost: the configured URL without its trailing slash, else https://<default>. */
export function chooseHost(url: string | undefined, defaultHost: string): string {
  return url ? url.replace(/\/+$/, '') : `https://${defaultHost}`;
}

export interface StandardProvider {
  name: OAuthProvider['name'];
  authUrl: string;
  tokenUrl: string;
  /** The provider's default scopes. */
  scopes: string[];
  /** False where GoTrue ignores the request's `scopes` (bitbucket, notion, workos). */
  acceptsScopes?: boolean;
  authStyle?: AuthStyle;
  /** Fixed extra authorize parameters (before the forwarded ones, which win as in GoTrue). */
  authParams?: [string, string][];
  userInfo: OAuthProvider['userInfo'];
}

/** The common shape: an oauth2.Config with AuthCodeURL and Exchange, and the provider's GetUserData. */
export function standardProvider(s: ProviderSettings, p: StandardProvider): OAuthProvider {
  return {
    name: p.name,
    async authorizationUrl(_ctx, a) {
      const scopes = p.acceptsScopes === false ? p.scopes : withRequestScopes(p.scopes, a.scopes);
      return authCodeUrl({
        authUrl: p.authUrl,
        clientId: s.clientIds[0] ?? '',
        redirectUri: s.redirectUri,
        scopes,
        state: a.state,
        params: [...(p.authParams ?? []), ...a.params],
      });
    },
    exchange(ctx, c) {
      return exchangeCode(ctx, { tokenUrl: p.tokenUrl, settings: s, code: c.code, authStyle: p.authStyle });
    },
    refresh(ctx, refreshToken) {
      return refreshAccessToken(ctx, { tokenUrl: p.tokenUrl, settings: s, authStyle: p.authStyle }, refreshToken);
    },
    userInfo: p.userInfo,
  };
}

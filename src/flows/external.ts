// Sign-in with an external provider (GoTrue: external.go, external_oauth.go). /authorize writes a
// flow_state row whose id is the OAuth `state` and sends the browser to the provider; /callback
// loads that row, exchanges the code, reads the user, signs them in (or links, or accepts an
// invite) and sends the browser to the redirect target with a session (implicit) or a `code`
// (PKCE). The state is consumed under a row lock, so a replayed callback gets nothing.
import { base64url, utf8 } from '../crypto/encoding.ts';
import { deleteFlowState, findFlowStateById, type FlowStateRow, insertOAuthClientState, insertOAuthFlowState, issueFlowStateCode, takeOAuthClientState } from '../db/flow-state.ts';
import { findUserByConfirmationToken } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, notFound, unprocessable, validationFailed } from '../http/errors.ts';
import { claimsToData } from '../oauth/claims.ts';
import { enabledProvider, isProviderName, oauthContext } from '../oauth/context.ts';
import { ProviderError, type ProviderUser } from '../oauth/provider.ts';
import { acceptInviteExternal, CommitThenFail, type ExternalIdentity, linkIdentityExternal, signInExternal } from './external-accounts.ts';
import { transactionThenSend } from './outbox.ts';
import { parsePkce } from './pkce.ts';
import { createSession, type RequestMeta, tokenResponse } from './session.ts';
import { fragment } from './verify.ts';

/** The OAuth parameters authsvc sets itself; a client cannot override them (GoTrue's reservedOAuthParams, bar nonce). */
const RESERVED = ['client_id', 'client_secret', 'redirect_uri', 'response_type', 'state', 'code_challenge', 'code_challenge_method', 'code_verifier'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** oauth_client_states live this long (GoTrue's OAuthClientState.IsExpired). */
const CLIENT_STATE_TTL_MS = 10 * 60 * 1000;

export const unsupportedProvider = (why: string) => validationFailed(`Unsupported provider: ${why}`);

function providerOrThrow(deps: Deps, name: string) {
  const found = enabledProvider(deps.config, name);
  if (found) return found;
  // GoTrue's two texts: a known provider switched off, or a name it does not know.
  throw unsupportedProvider(isProviderName(name.toLowerCase()) ? 'provider is not enabled' : `Provider ${name.toLowerCase()} could not be found`);
}

export interface AuthorizeRequest {
  provider: string;
  /** The whole /authorize query. */
  query: URLSearchParams;
  /** The allow-listed redirect target (GoTrue's GetReferrer). */
  referrer: string;
  /** Manual linking: the signed-in user the identity will join. */
  linkingTargetId?: string;
}

/** GetExternalProviderRedirectURL. */
export async function externalAuthorizeUrl(deps: Deps, r: AuthorizeRequest): Promise<string> {
  const { provider, settings } = providerOrThrow(deps, r.provider);
  const inviteToken = r.query.get('invite_token') ?? '';
  if (inviteToken && !(await findUserByConfirmationToken(deps.db, inviteToken))) {
    throw notFound('user_not_found', 'User identified by token not found');
  }
  const pkce = parsePkce({ code_challenge: r.query.get('code_challenge') ?? undefined, code_challenge_method: r.query.get('code_challenge_method') ?? undefined });
  const params: [string, string][] = [];
  for (const key of new Set(r.query.keys())) {
    if (key === 'scopes' || key === 'provider' || RESERVED.includes(key.toLowerCase())) continue;
    params.push([key, r.query.get(key)!]);
  }
  const now = deps.now();
  let codeChallenge: string | undefined;
  let oauthClientStateId: string | undefined;
  if (provider.requiresPkce) {
    const verifier = base64url(deps.randomBytes(32));
    oauthClientStateId = crypto.randomUUID();
    await insertOAuthClientState(deps.db, { id: oauthClientStateId, providerType: settings.name, codeVerifier: verifier, now });
    codeChallenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(verifier))));
  }
  const id = crypto.randomUUID();
  await insertOAuthFlowState(deps.db, {
    id, providerType: settings.name, challenge: pkce?.challenge, method: pkce?.method, inviteToken: inviteToken || undefined,
    referrer: r.referrer, oauthClientStateId, linkingTargetId: r.linkingTargetId, emailOptional: settings.emailOptional, now,
  });
  try {
    return await provider.authorizationUrl(oauthContext(deps), { state: id, scopes: r.query.get('scopes') ?? '', params, codeChallenge });
  } catch (err) {
    await deleteFlowState(deps.db, id);
    if (err instanceof ProviderError) throw new ApiError(500, 'unexpected_failure', 'Error getting request token from external provider', undefined, err);
    throw err;
  }
}

/** loadExternalState: errors here go to SITE_URL (303), not to the flow's redirect target. */
export async function loadCallbackState(deps: Deps, state: string | null): Promise<FlowStateRow> {
  if (!state) throw badRequest('bad_oauth_callback', 'OAuth state parameter missing');
  if (!UUID_RE.test(state)) throw badRequest('bad_oauth_state', 'OAuth state parameter is invalid');
  const flow = await findFlowStateById(deps.db, state.toLowerCase());
  if (!flow || flow.authenticationMethod !== 'oauth') throw badRequest('bad_oauth_state', 'OAuth state not found or expired');
  if (expired(deps, flow)) throw badRequest('bad_oauth_state', 'OAuth state has expired');
  if (flow.codeChallenge && flow.userId) throw badRequest('flow_state_already_used', 'State has already been used');
  return flow;
}

function expired(deps: Deps, flow: FlowStateRow): boolean {
  const created = flow.createdAt?.getTime() ?? 0;
  return deps.now().getTime() > created + deps.config.external.flowStateExpiry * 1000;
}

/** getExternalRedirectURL: EXTERNAL_REDIRECT_URL, else the flow's referrer, else SITE_URL. */
export function callbackRedirectBase(deps: Deps, flow: FlowStateRow | undefined): string {
  return deps.config.external.redirectUrl || flow?.referrer || deps.config.siteUrl;
}

/** The provider said no (`error` on the callback): its words go back as they came. */
export class ProviderRefusal extends Error {
  constructor(readonly error: string, readonly description: string) {
    super(description);
  }
}

/** Reads the provider's side of the callback: code → token → user. */
async function fetchExternalUser(deps: Deps, flow: FlowStateRow, params: URLSearchParams) {
  const refused = params.get('error');
  if (refused) throw new ProviderRefusal(refused, params.get('error_description') ?? '');
  const { provider, settings } = providerOrThrow(deps, flow.providerType);
  const code = params.get('code') ?? '';
  if (!provider.oauth1 && !code) throw badRequest('bad_oauth_callback', 'OAuth callback with missing authorization code missing');
  let codeVerifier: string | undefined;
  if (flow.oauthClientStateId) {
    const row = await takeOAuthClientState(deps.db, flow.oauthClientStateId);
    if (!row) throw unprocessable('oauth_client_state_not_found', 'OAuth state not found');
    if (row.providerType !== settings.name) throw badRequest('oauth_invalid_state', 'OAuth provider mismatch');
    if (deps.now().getTime() > row.createdAt.getTime() + CLIENT_STATE_TTL_MS) throw unprocessable('oauth_client_state_expired', 'OAuth state expired');
    codeVerifier = row.codeVerifier ?? undefined;
  }
  if (provider.requiresPkce && !codeVerifier) throw badRequest('oauth_invalid_state', 'OAuth PKCE code verifier missing');
  const ctx = oauthContext(deps);
  let token;
  try {
    token = await provider.exchange(ctx, { code, params, codeVerifier });
  } catch (err) {
    const msg = provider.oauth1 ? 'Unable to retrieve access token' : `Unable to exchange external code: ${code.slice(0, 4)}`;
    throw new ApiError(500, 'unexpected_failure', msg, undefined, err);
  }
  let user: ProviderUser;
  try {
    user = await provider.userInfo(ctx, token, params);
  } catch (err) {
    throw new ApiError(500, 'unexpected_failure', provider.oauth1 ? 'Error getting user email from external provider' : 'Error getting user profile from external provider', undefined, err);
  }
  return { settings, token, user };
}

/** GoTrue's choice: the primary email, else the last one listed; its flag is the identity's email_verified. */
export function identityFromUser(provider: string, user: ProviderUser, emailOptional: boolean): ExternalIdentity {
  if (user.emails.length === 0 && !emailOptional) throw new ApiError(500, 'unexpected_failure', 'Error getting user email from external provider');
  let chosen: { email: string; verified: boolean } = { email: '', verified: false };
  for (const e of user.emails) {
    chosen = e;
    if (e.primary) break;
  }
  const claims = { ...user.claims, email: chosen.email || undefined, email_verified: chosen.verified };
  return { provider, data: claimsToData(claims), emails: user.emails, emailOptional };
}

export interface CallbackResult {
  /** Where the browser goes. */
  location: string;
}

/** internalExternalProviderCallback. Errors are ApiError or ProviderRefusal; the route turns them into redirects. */
export async function finishExternalCallback(deps: Deps, flow: FlowStateRow, params: URLSearchParams, aud: string, meta: RequestMeta): Promise<CallbackResult> {
  const { settings, token, user } = await fetchExternalUser(deps, flow, params);
  const identity = identityFromUser(settings.name, user, flow.emailOptional);
  const base = callbackRedirectBase(deps, flow);
  const outcome = await transactionThenSend(deps, async (tx, out) => {
    const locked = await findFlowStateById(tx, flow.id, { forUpdate: true });
    if (!locked) throw badRequest('bad_oauth_state', 'OAuth state not found or expired');
    if (locked.codeChallenge && locked.userId) throw badRequest('flow_state_already_used', 'State has already been used');
    const c = { deps, tx, out, aud, ip: meta.ip, redirectTo: base };
    let signedIn;
    try {
      if (locked.linkingTargetId) signedIn = await linkIdentityExternal(c, identity, locked.linkingTargetId);
      else if (locked.inviteToken) signedIn = await acceptInviteExternal(c, identity, locked.inviteToken);
      else signedIn = await signInExternal(c, identity);
    } catch (err) {
      // The confirmation email is sent and the writes stay; the user sees why there is no session.
      if (err instanceof CommitThenFail) return { failed: err.error };
      throw err;
    }
    if (locked.codeChallenge && locked.authCode) {
      await issueFlowStateCode(tx, locked.id, { userId: signedIn.id, providerAccessToken: token.accessToken, providerRefreshToken: token.refreshToken, now: deps.now() });
      const url = new URL(base);
      url.searchParams.set('code', locked.authCode);
      return { location: url.toString() };
    }
    const issued = await createSession(deps, tx, signedIn, 'oauth', meta);
    const body = (await tokenResponse(deps, tx, issued)).body;
    await deleteFlowState(tx, locked.id);
    const f: Record<string, string | number> = {
      access_token: String(body.access_token), token_type: 'bearer', expires_in: Number(body.expires_in), expires_at: Number(body.expires_at),
      refresh_token: String(body.refresh_token), provider_token: token.accessToken,
    };
    if (token.refreshToken) f.provider_refresh_token = token.refreshToken;
    return { location: `${base}#${fragment(f)}` };
  });
  if ('failed' in outcome) throw outcome.failed;
  return outcome;
}

const OAUTH_ERROR: Record<number, string> = { 400: 'invalid_request', 401: 'unauthorized_client', 403: 'access_denied', 500: 'server_error', 503: 'temporarily_unavailable' };
const DENIED = new Set(['signup_disabled', 'user_banned', 'provider_email_needs_verification']);

/** getErrorQueryString: GoTrue's OAuth error triple for an error of the callback. */
export function oauthErrorParams(err: unknown): Record<string, string> {
  if (err instanceof ProviderRefusal) return { error: err.error, error_description: err.description };
  if (err instanceof ApiError) {
    return { error: DENIED.has(err.errorCode) ? 'access_denied' : OAUTH_ERROR[err.status] ?? 'server_error', error_code: err.errorCode, error_description: err.message };
  }
  return { error: 'server_error', error_code: 'unexpected_failure', error_description: 'Unexpected failure' };
}

/** redirectErrors: the triple in the query (the target's own query kept) and in the fragment, with `sb`. */
export function errorRedirect(base: string, params: Record<string, string>, withFragment: boolean): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  url.hash = withFragment ? fragment(params) : '';
  return url.toString();
}

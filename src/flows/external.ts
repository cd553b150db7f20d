// Sign-in with an external provider (GoTrue: external.go, external_oauth.go). /authorize writes a
// flow_state row whose id is the OAuth `state` and sends the browser to the provider; /callback
// loads that row, exchanges the code, reads the user, signs them in (or links, or accepts an
// invite) and sends the browser to the redirect target with a session (implicit) or a `code`
// (PKCE). A callback takes its state in one statement before it calls the provider, so a
// replayed or racing callback never reaches the provider. Provider calls share one time budget.
import { sha256 } from '@noble/hashes/sha2.js';
import { base64url, utf8 } from '../crypto/encoding.ts';
import { DecryptionError } from '../crypto/encrypted-string.ts';
import {
  claimOAuthFlowState,
  deleteFlowState,
  deleteStaleFlowStates,
  findFlowStateById,
  type FlowStateRow,
  insertOAuthClientState,
  insertOAuthFlowState,
  issueFlowStateCode,
  takeOAuthClientState,
} from '../db/flow-state.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, validationFailed } from '../core/errors.ts';
import { hasUnstorableChars } from '../http/read-json.ts';
import { claimsToData, storableData } from '../oauth/claims.ts';
import { enabledProvider, isProviderName, oauthContext } from '../oauth/context.ts';
import type { OAuthProvider, ProviderEmail, ProviderSettings, ProviderUser } from '../oauth/provider.ts';
import { ProviderError } from '../oauth/provider-error.ts';
import { errorFields } from '../telemetry/logger.ts';
import { afterUserCreated } from '../hooks/user-created.ts';
import { signInExternal } from '../accounts/external-accounts.ts';
import type { AccountContext, ExternalIdentity } from '../accounts/external-identity.ts';
import { acceptInviteExternal, findPendingInvitation, linkIdentityExternal } from '../accounts/external-link.ts';
import { customClient, isCustomName, lookupCustomProvider } from '../accounts/custom-provider.ts';
import { type Notification, notifyAll } from '../accounts/notify.ts';
import { sendTimeoutMs, transactionThenSend } from '../accounts/outbox.ts';
import { parsePkce } from '../accounts/pkce-params.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { fragment } from '../http/fragment.ts';
import { ProviderRefusal } from './external-errors.ts';
import { keepProviderToken } from './provider-tokens.ts';

/** The OAuth parameters authsvc sets itself; a client cannot override them (GoTrue's reservedOAuthParams, bar nonce). */
const RESERVED = [
  'client_id',
  'client_secret',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'code_verifier',
];
/** /authorize's own parameters, kept from the provider; unlike GoTrue, the invite token too (it is a credential). */
const OWN_PARAMS = ['scopes', 'provider', 'invite_token'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** GoTrue's cleanup deletes flow_state and oauth_client_states rows a day old. */
const STALE_STATE_MS = 24 * 3600 * 1000;

/** The time all provider calls of one /authorize, /callback or ID-token grant may take together. */
export const providerBudget = (deps: Deps) => AbortSignal.timeout(sendTimeoutMs(deps));

export const unsupportedProvider = (why: string) => validationFailed(`Unsupported provider: ${why}`);

const CUSTOM_MISSING = {
  feature: () => 'custom OAuth providers are disabled',
  unknown: (name: string) => `custom provider ${name} not found`,
  disabled: (name: string) => `custom provider ${name} is disabled`,
};

async function providerOrThrow(
  deps: Deps,
  name: string,
): Promise<{ provider: OAuthProvider; settings: ProviderSettings }> {
  const lower = name.toLowerCase();
  if (isCustomName(lower)) {
    const found = await lookupCustomProvider(deps, lower);
    if ('missing' in found) throw unsupportedProvider(CUSTOM_MISSING[found.missing](lower));
    try {
      return await customClient(deps, found.row);
    } catch (err) {
      if (err instanceof DecryptionError)
        throw unsupportedProvider(`error decrypting client secret for provider ${lower}`);
      throw err;
    }
  }
  const found = enabledProvider(deps.config, name);
  if (found) return found;
  // GoTrue's two texts: a known provider switched off, or a name it does not know.
  throw unsupportedProvider(
    isProviderName(name.toLowerCase())
      ? 'provider is not enabled'
      : `Provider ${name.toLowerCase()} could not be found`,
  );
}

export interface AuthorizeRequest {
  provider: string;
  /** The whole /authorize query. */
  query: URLSearchParams;
  /** The allow-listed redirect target (GoTrue's GetReferrer). */
  referrer: string;
  /** Manual linking: the signed-in user the identity will join, and the session that asks. */
  linkingTargetId?: string;
  linkingSessionId?: string;
}

/** GetExternalProviderRedirectURL: the provider's URL, and the state (the flow_state row's id). */
export async function externalAuthorizeUrl(deps: Deps, r: AuthorizeRequest): Promise<{ url: string; state: string }> {
  const { provider, settings } = await providerOrThrow(deps, r.provider);
  // Checked at the callback, as GoTrue does, and nowhere before it: /authorize answers the same
  // whatever the value, so it tells nothing about anyone's pending tokens (review H1).
  const inviteToken = r.query.get('invite_token') ?? '';
  const pkce = parsePkce({
    code_challenge: r.query.get('code_challenge') ?? undefined,
    code_challenge_method: r.query.get('code_challenge_method') ?? undefined,
  });
  const params: [string, string][] = [];
  for (const key of new Set(r.query.keys())) {
    if (OWN_PARAMS.includes(key) || RESERVED.includes(key.toLowerCase())) continue;
    params.push([key, r.query.get(key)!]);
  }
  const now = deps.now();
  await deleteStaleStates(deps, now);
  const id = crypto.randomUUID();
  let oauthClientStateId: string | undefined;
  if (provider.pkce) {
    // GoTrue: oauth2.GenerateVerifier (32 random bytes, base64url) and its S256 challenge.
    const verifier = base64url(deps.randomBytes(32));
    oauthClientStateId = crypto.randomUUID();
    params.push(['code_challenge', base64url(sha256(utf8(verifier)))], ['code_challenge_method', 'S256']);
    await insertOAuthClientState(deps.db, {
      id: oauthClientStateId,
      providerType: settings.name,
      codeVerifier: verifier,
      now,
    });
  }
  await insertOAuthFlowState(deps.db, {
    id,
    providerType: settings.name,
    challenge: pkce?.challenge,
    method: pkce?.method,
    inviteToken: inviteToken || undefined,
    referrer: r.referrer,
    linkingTargetId: r.linkingTargetId,
    linkingSessionId: r.linkingSessionId,
    emailOptional: settings.emailOptional,
    oauthClientStateId,
    now,
  });
  try {
    const url = await provider.authorizationUrl(oauthContext(deps, providerBudget(deps)), {
      state: id,
      scopes: r.query.get('scopes') ?? '',
      params,
    });
    return { url, state: id };
  } catch (err) {
    await deleteFlowState(deps.db, id);
    if (oauthClientStateId) await takeOAuthClientState(deps.db, oauthClientStateId);
    // GoTrue answers a provider it cannot set up (Apple's or Google's discovery failing) with
    // 400 "Unsupported provider: <why>"; Twitter's request token failing is answered the same way.
    if (err instanceof ProviderError) throw unsupportedProvider(err.message);
    throw err;
  }
}

/** Opportunistic cleanup (GoTrue runs models/cleanup.go per request): a bounded batch per /authorize. */
async function deleteStaleStates(deps: Deps, now: Date): Promise<void> {
  const horizon = Math.max(STALE_STATE_MS, deps.config.external.flowStateExpiry * 1000);
  try {
    await deleteStaleFlowStates(deps.db, new Date(now.getTime() - horizon));
  } catch (err) {
    // The next /authorize tries again; this one goes on.
    deps.logger.warn('could not delete stale flow states', errorFields(err));
  }
}

/**
 * loadExternalState, then the state is taken for this callback (see claimOAuthFlowState): errors
 * here go to SITE_URL (303), not to the flow's redirect target. `browserStarted`: the request
 * carries this browser's binding to the state (http/oauth-binding.ts); a flow that would hand a
 * session to the browser (not PKCE) finishes only there, and is left untouched otherwise.
 */
export async function loadCallbackState(
  deps: Deps,
  state: string | null,
  browserStarted: boolean,
): Promise<FlowStateRow> {
  if (!state) throw badRequest('bad_oauth_callback', 'OAuth state parameter missing');
  if (!UUID_RE.test(state)) throw badRequest('bad_oauth_state', 'OAuth state parameter is invalid');
  const flow = await findFlowStateById(deps.db, state.toLowerCase());
  const gone = () => badRequest('bad_oauth_state', 'OAuth state not found or expired');
  const used = () => badRequest('flow_state_already_used', 'State has already been used');
  if (flow?.authenticationMethod !== 'oauth') throw gone();
  if (expired(deps, flow)) throw badRequest('bad_oauth_state', 'OAuth state has expired');
  if (flow.codeChallenge && flow.userId) throw used();
  if (!flow.codeChallenge && !browserStarted) {
    throw badRequest(
      'bad_oauth_state',
      'OAuth state was not issued to this browser: finish the sign-in in the browser that started it',
    );
  }
  // Taken by another callback: the implicit flow answers as for a state already consumed.
  const claimed = await claimOAuthFlowState(deps.db, flow.id, deps.now());
  if (!claimed) throw flow.codeChallenge ? used() : gone();
  return claimed;
}

function expired(deps: Deps, flow: FlowStateRow): boolean {
  const created = flow.createdAt?.getTime() ?? 0;
  return deps.now().getTime() > created + deps.config.external.flowStateExpiry * 1000;
}

/** getExternalRedirectURL: EXTERNAL_REDIRECT_URL, else the flow's referrer, else SITE_URL. */
export function callbackRedirectBase(deps: Deps, flow: FlowStateRow | undefined): string {
  return deps.config.external.redirectUrl || flow?.referrer || deps.config.siteUrl;
}

/** Reads the provider's side of the callback: code → token → user. */
async function fetchExternalUser(deps: Deps, flow: FlowStateRow, params: URLSearchParams) {
  const refused = params.get('error');
  if (refused) throw new ProviderRefusal(refused, params.get('error_description') ?? '');
  const { provider, settings } = await providerOrThrow(deps, flow.providerType);
  const code = params.get('code') ?? '';
  if (!provider.oauth1 && !code)
    throw badRequest('bad_oauth_callback', 'OAuth callback with missing authorization code missing');
  // Taken once, like the state: a replayed callback finds no verifier.
  const codeVerifier = flow.oauthClientStateId
    ? await takeOAuthClientState(deps.db, flow.oauthClientStateId)
    : undefined;
  if (flow.oauthClientStateId && !codeVerifier) throw badRequest('bad_oauth_state', 'OAuth state not found or expired');
  const ctx = oauthContext(deps, providerBudget(deps));
  let token;
  try {
    token = await provider.exchange(ctx, { code, params, codeVerifier });
  } catch (err) {
    const msg = provider.oauth1
      ? 'Unable to retrieve access token'
      : `Unable to exchange external code: ${code.slice(0, 4)}`;
    throw new ApiError(500, 'unexpected_failure', msg, undefined, err);
  }
  let user: ProviderUser;
  try {
    user = await provider.userInfo(ctx, token, params);
  } catch (err) {
    throw new ApiError(
      500,
      'unexpected_failure',
      provider.oauth1
        ? 'Error getting user email from external provider'
        : 'Error getting user profile from external provider',
      undefined,
      err,
    );
  }
  return { settings, token, user };
}

/** users.email is varchar(255); a NUL or an unpaired surrogate cannot be stored at all. */
const storableEmail = (e: ProviderEmail) =>
  !hasUnstorableChars(e.email) && [...e.email].length <= 255 && [...e.email.toLowerCase()].length <= 255;

/**
 * GoTrue's choice: the primary email, else the last one listed; its flag is the identity's
 * email_verified. What the provider sent is untrusted: an address that cannot be stored is
 * refused when it is the chosen one and dropped otherwise (never trimmed into another address),
 * the same for the subject; other claims lose their unstorable characters.
 */
export function identityFromUser(provider: string, user: ProviderUser, emailOptional: boolean): ExternalIdentity {
  if (user.emails.length === 0 && !emailOptional)
    throw new ApiError(500, 'unexpected_failure', 'Error getting user email from external provider');
  let chosen: ProviderEmail = { email: '', verified: false, primary: false };
  for (const e of user.emails) {
    chosen = e;
    if (e.primary) break;
  }
  if (!storableEmail(chosen)) throw badRequest('email_address_invalid', `Email address from ${provider} is invalid`);
  const profileError = () =>
    new ApiError(500, 'unexpected_failure', 'Error getting user profile from external provider');
  if (hasUnstorableChars(String(user.claims.sub ?? ''))) throw profileError();
  const claims = { ...user.claims, email: chosen.email || undefined, email_verified: chosen.verified };
  const data = storableData(claimsToData(claims));
  if (data === undefined) throw profileError();
  return { provider, data: data as Record<string, unknown>, emails: user.emails.filter(storableEmail), emailOptional };
}

export interface CallbackResult {
  /** Where the browser goes. */
  location: string;
}

/**
 * internalExternalProviderCallback. Errors are ApiError or ProviderRefusal; the route turns them
 * into redirects. `client`: the rate-limit client key, for an old-format invite link (link-tokens.ts).
 */
export async function finishExternalCallback(
  deps: Deps,
  flow: FlowStateRow,
  params: URLSearchParams,
  aud: string,
  meta: RequestMeta,
  client?: string,
): Promise<CallbackResult> {
  const { settings, token, user } = await fetchExternalUser(deps, flow, params);
  const identity = identityFromUser(settings.name, user, flow.emailOptional);
  const base = callbackRedirectBase(deps, flow);
  const invitation = flow.inviteToken ? await findPendingInvitation(deps, flow.inviteToken, aud, client) : undefined;
  let created: string | undefined;
  const notices: Notification[] = [];
  const outcome = await transactionThenSend(deps, async (tx, out) => {
    const locked = await findFlowStateById(tx, flow.id, { forUpdate: true });
    if (!locked) throw badRequest('bad_oauth_state', 'OAuth state not found or expired');
    if (locked.codeChallenge && locked.userId)
      throw badRequest('flow_state_already_used', 'State has already been used');
    const c: AccountContext = { deps, tx, out, aud, ip: meta.ip, redirectTo: base, notices };
    if (locked.linkingTargetId && locked.codeChallenge && locked.authCode) {
      // A PKCE link is made at the code exchange, by the client holding the verifier, never here:
      // a victim's browser finishing an attacker's linking flow links nothing (review M1).
      await issueFlowStateCode(tx, locked.id, {
        userId: locked.linkingTargetId,
        providerAccessToken: token.accessToken,
        providerRefreshToken: token.refreshToken,
        linkingIdentity: identity,
        now: deps.now(),
      });
      const url = new URL(base);
      url.searchParams.set('code', locked.authCode);
      return { location: url.toString() };
    }
    // A CommitThenFail from these (an unverified provider address): the confirmation email is
    // sent and the writes stay; the user sees why there is no session.
    let signedIn;
    if (locked.linkingTargetId)
      signedIn = await linkIdentityExternal(c, identity, {
        userId: locked.linkingTargetId,
        sessionId: locked.linkingSessionId,
      });
    else if (locked.inviteToken) signedIn = await acceptInviteExternal(c, identity, invitation);
    else signedIn = await signInExternal(c, identity);
    created = c.createdUserId;
    await keepProviderToken(deps, tx, signedIn.id, identity, token.refreshToken);
    if (locked.codeChallenge && locked.authCode) {
      await issueFlowStateCode(tx, locked.id, {
        userId: signedIn.id,
        providerAccessToken: token.accessToken,
        providerRefreshToken: token.refreshToken,
        now: deps.now(),
      });
      const url = new URL(base);
      url.searchParams.set('code', locked.authCode);
      return { location: url.toString() };
    }
    const issued = await createSession(deps, tx, signedIn, 'oauth', meta);
    const body = (await tokenResponse(deps, tx, issued)).body;
    await deleteFlowState(tx, locked.id);
    const f: Record<string, string | number> = {
      access_token: String(body.access_token),
      token_type: 'bearer',
      expires_in: Number(body.expires_in),
      expires_at: Number(body.expires_at),
      refresh_token: String(body.refresh_token),
      provider_token: token.accessToken,
      provider: settings.name,
    };
    if (token.refreshToken) f.provider_refresh_token = token.refreshToken;
    return { location: `${base}#${fragment(f)}` };
  });
  // GoTrue: once the new account is committed; its error is the answer (the account stays).
  if (created) await afterUserCreated(deps, created);
  await notifyAll(deps, notices, meta.ip);
  return outcome;
}

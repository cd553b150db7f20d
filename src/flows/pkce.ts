// PKCE for email links (GoTrue §5.4): the request that sends the email stores a code challenge
// in flow_state; following the link yields `?code=<auth_code>`; POST /token?grant_type=pkce
// trades the code and the verifier for a session, once.
import { timingSafeEqual } from '../crypto/encoding.ts';
import { challengeOf } from '../accounts/pkce-params.ts';
import { insertAudit } from '../db/audit.ts';
import { transaction } from '../db/database.ts';
import { deleteFlowState, findFlowStateByAuthCode } from '../db/flow-state.ts';
import { findUserById, isBanned } from '../db/users.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, validationFailed } from '../core/errors.ts';
import type { ExternalIdentity } from '../accounts/external-identity.ts';
import { linkIdentityExternal } from '../accounts/external-link.ts';
import { type Notification, notifyAll } from '../accounts/notify.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { AmrMethod, RequestMeta, TokenResponse } from '../accounts/issued-session.ts';
import { keepProviderToken } from './provider-tokens.ts';

const AMR: Record<string, AmrMethod> = {
  'email/signup': 'email/signup',
  magiclink: 'magiclink',
  recovery: 'recovery',
  invite: 'invite',
  email_change: 'email_change',
  oauth: 'oauth',
  'sso/saml': 'sso/saml',
};

export async function pkceGrant(
  deps: Deps,
  authCode: string,
  verifier: string,
  aud: string,
  meta: RequestMeta,
): Promise<TokenResponse> {
  if (!authCode || !verifier)
    throw validationFailed('invalid request: both auth code and code verifier should be non-empty');
  const notFound = () => new ApiError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
  const notices: Notification[] = [];
  const token = await transaction(deps.db, async (tx) => {
    const now = deps.now();
    const flow = await findFlowStateByAuthCode(tx, authCode);
    if (!flow?.userId) throw notFound();
    // Magic links count from when the code was issued, everything else from creation.
    const start = (flow.authenticationMethod === 'magiclink' ? flow.authCodeIssuedAt : null) ?? flow.createdAt ?? now;
    if (now.getTime() > start.getTime() + deps.config.external.flowStateExpiry * 1000) {
      throw new ApiError(422, 'flow_state_expired', 'invalid flow state, flow state has expired');
    }
    if (!flow.codeChallenge || !flow.codeChallengeMethod) throw notFound();
    if (!timingSafeEqual(await challengeOf(verifier, flow.codeChallengeMethod), flow.codeChallenge)) {
      throw badRequest('bad_code_verifier', 'code challenge does not match previously saved code verifier');
    }
    let user = await findUserById(tx, flow.userId);
    // A soft-deleted user is a missing one (review M3), whatever flow state outlived the delete.
    if (!user || user.deletedAt) throw notFound();
    if (isBanned(user, now)) throw new ApiError(403, 'user_banned', 'User is banned');
    await deleteFlowState(tx, flow.id);
    // A PKCE identity link is made here, by whoever holds the verifier: the client that started it
    // (flows/external.ts, review M1).
    if (flow.linkingIdentity) {
      const target = { userId: user.id, sessionId: flow.linkingSessionId };
      const identity = flow.linkingIdentity as ExternalIdentity;
      user = await linkIdentityExternal({ deps, tx, aud, ip: meta.ip, notices }, identity, target);
      await keepProviderToken(deps, tx, user.id, identity, flow.providerRefreshToken);
    }
    const oauth = flow.authenticationMethod === 'oauth';
    await insertAudit(tx, {
      actor: user,
      action: 'login',
      traits: oauth ? { provider_type: flow.providerType } : { provider: 'email' },
      ip: meta.ip,
      now,
    });
    const issued = await createSession(deps, tx, user, AMR[flow.authenticationMethod] ?? 'otp', meta);
    // An OAuth sign-in hands back the provider's tokens, as GoTrue's PKCE grant does.
    const extra: Record<string, string> = {};
    if (oauth && flow.providerAccessToken) extra.provider_token = flow.providerAccessToken;
    if (oauth && flow.providerRefreshToken) extra.provider_refresh_token = flow.providerRefreshToken;
    return tokenResponse(deps, tx, issued, extra);
  });
  await notifyAll(deps, notices, meta.ip);
  return token;
}

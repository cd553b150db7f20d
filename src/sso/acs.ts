// POST /sso/saml/acs (GoTrue: api/samlacs.go handleSamlAcs): the IdP's HTTP-POST answer. A UUID
// RelayState is an SP-initiated flow (its relay state is taken, once, and names the request the
// answer must be InResponseTo); an empty or URL RelayState is IdP-initiated. The Response is
// verified against the IdP's metadata certificates, checked, its assertion id used once, and the
// user signed in as `sso:<provider id>`: PKCE → `?code=`, else a session in the fragment.
import { transaction } from '../db/database.ts';
import { deleteFlowState, findFlowStateById, issueFlowStateCode } from '../db/flow-state.ts';
import {
  deleteExpiredAssertionIds,
  findRelayState,
  findSsoProviderByEntityId,
  findSsoProviderById,
  setSessionNotAfter,
  type SsoProvider,
  takeRelayState,
  updateSamlProviderRow,
  useAssertionId,
} from '../db/sso.ts';
import type { Deps } from '../deps.ts';
import { createSession, tokenResponse } from '../accounts/session.ts';
import type { RequestMeta } from '../accounts/issued-session.ts';
import { fragment } from '../http/fragment.ts';
import { ApiError, badRequest, notFound, unprocessable, validationFailed } from '../core/errors.ts';
import { isRedirectAllowed } from '../http/redirect.ts';
import { hasUnstorableChars } from '../http/read-json.ts';
import { storableData } from '../oauth/claims.ts';
import { errorFields } from '../telemetry/logger.ts';
import { afterUserCreated } from '../hooks/user-created.ts';
import { signInSso } from './account.ts';
import { assertVouched } from './domains.ts';
import { mapAttributes, samlEmail, samlUserId, type AttributeMapping } from './attributes.ts';
import { parseIdpMetadata, refreshedMetadata } from './providers.ts';
import { checkResponse, InvalidAssertion } from './response-checks.ts';
import { samlXmlOf } from './runtime.ts';
import { type SamlResponse, SamlXmlError } from '../crypto/saml-xml.ts';
import { spUrls } from './sp.ts';

export interface AcsForm {
  SAMLResponse?: string;
  RelayState?: string;
  SAMLart?: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** provider.Claims' own keys; every other mapped attribute goes to custom_claims. */
const CLAIM_KEYS = new Set([
  'iss',
  'sub',
  'aud',
  'iat',
  'exp',
  'name',
  'family_name',
  'given_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'updated_at',
  'email',
  'email_verified',
  'phone',
  'phone_verified',
  'full_name',
  'avatar_url',
  'slug',
  'provider_id',
  'user_name',
]);

const notValid = (why: string) => validationFailed(`SAML Assertion is not valid: ${why}`);
const disabled = () => notFound('sso_provider_disabled', 'SSO Provider assigned for this domain is currently disabled');

/** url.ParseRequestURI: an absolute URL or an absolute path. */
function isRequestUri(s: string): boolean {
  if (s.startsWith('/')) return true;
  try {
    return new URL(s).protocol !== '';
  } catch {
    return false;
  }
}

function decodeResponse(form: AcsForm): string {
  const raw = (form.SAMLResponse ?? '').replace(/\s+/g, '');
  if (!raw) throw validationFailed('SAMLResponse is missing');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(raw) || raw.length % 4 !== 0)
    throw validationFailed('SAMLResponse is not a valid Base64 string');
  const bytes = Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationFailed('SAMLResponse is not a valid XML SAML assertion');
  }
}

interface Started {
  provider: SsoProvider;
  requestId?: string;
  redirectTo: string;
  flowStateId?: string | null;
  xml: string;
}

/** Which flow this answer belongs to, and the provider it comes from (GoTrue's order and texts). */
async function identify(deps: Deps, form: AcsForm): Promise<Started> {
  const relay = form.RelayState ?? '';
  if (UUID_RE.test(relay)) {
    const state = await findRelayState(deps.db, relay.toLowerCase());
    if (!state) throw notFound('saml_relay_state_not_found', 'SAML RelayState does not exist, try logging in again?');
    const age = deps.now().getTime() - (state.createdAt?.getTime() ?? 0);
    if (age >= deps.config.saml.relayStateValidity * 1000) {
      await takeRelayState(deps.db, state.id);
      throw unprocessable('saml_relay_state_expired', 'SAML RelayState has expired. Try logging in again?');
    }
    const provider = await findSsoProviderById(deps.db, state.ssoProviderId);
    if (!provider) throw new ApiError(500, 'unexpected_failure', 'Unable to find SSO Provider from SAML RelayState');
    if (provider.provider.disabled === true) throw disabled();
    // Taken before the answer is looked at, as GoTrue: one try per relay state; of two racing
    // answers only one goes on.
    if (!(await takeRelayState(deps.db, state.id)))
      throw notFound('saml_relay_state_not_found', 'SAML RelayState does not exist, try logging in again?');
    return {
      provider,
      requestId: state.requestId,
      redirectTo: state.redirectTo ?? '',
      flowStateId: state.flowStateId,
      xml: decodeResponse(form),
    };
  }
  if (relay !== '' && !isRequestUri(relay)) throw validationFailed('SAML RelayState is not a valid UUID or URL');
  if (form.SAMLart) throw validationFailed('SAML Artifact response can only be used with SP initiated flow');
  const xml = decodeResponse(form);
  let issuer: string | undefined;
  try {
    issuer = (await samlXmlOf(deps)).peekIssuer(xml);
  } catch (err) {
    if (err instanceof SamlXmlError) throw validationFailed('SAMLResponse is not a valid XML SAML assertion');
    throw err;
  }
  const provider = issuer ? await findSsoProviderByEntityId(deps.db, issuer) : undefined;
  if (!provider)
    throw notFound('saml_idp_not_found', 'A SAML connection has not been established with this Identity Provider');
  if (provider.provider.disabled === true) throw disabled();
  return { provider, redirectTo: relay, xml };
}

/** The identity's data as GoTrue builds it: mapped claims, the rest in custom_claims. */
function identityData(
  entityId: string,
  sub: string,
  email: string,
  claims: Record<string, unknown>,
): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(claims)) {
    if (CLAIM_KEYS.has(k) && typeof v === 'string') data[k] = v;
    else if (!CLAIM_KEYS.has(k)) custom[k] = v;
  }
  Object.assign(data, { iss: entityId, sub, email, email_verified: true, phone_verified: false });
  if (Object.keys(custom).length > 0) data.custom_claims = custom;
  const stored = storableData(data);
  if (stored === undefined)
    throw new ApiError(500, 'unexpected_failure', 'Mapped claims from provider could not be serialized into JSON');
  return stored as Record<string, unknown>;
}

export async function handleAcs(deps: Deps, form: AcsForm, aud: string, meta: RequestMeta): Promise<string> {
  const started = await identify(deps, form);
  const { provider } = started;
  let idp = await parseIdpMetadata(deps, provider.saml.metadataXml);
  const refreshed = await refreshedMetadata(deps, provider, idp);
  if (refreshed) idp = refreshed.meta;
  const sp = spUrls(deps.config);
  let response: SamlResponse;
  let expiresAt: Date;
  try {
    // GoTrue tries the current key, then the next one (an IdP may still encrypt to either).
    const { allowEncryptedAssertions, privateKey, privateKeyNext } = deps.config.saml;
    const keys = allowEncryptedAssertions ? [privateKey, privateKeyNext].filter((k): k is string => !!k) : [];
    response = (await samlXmlOf(deps)).verifyResponse(started.xml, idp.signingCerts, keys);
    expiresAt = checkResponse(response, {
      idpEntityId: provider.saml.entityId,
      spEntityId: sp.entityId,
      acsUrl: sp.acsUrl,
      requestId: started.requestId,
      now: deps.now(),
    });
  } catch (err) {
    if (err instanceof SamlXmlError || err instanceof InvalidAssertion) throw notValid(err.message);
    throw err;
  }
  const assertion = response.assertion;
  const sub = samlUserId(assertion);
  if (!sub || hasUnstorableChars(sub)) {
    throw badRequest(
      'saml_assertion_no_user_id',
      'SAML Assertion did not contain a persistent Subject Identifier attribute or Subject NameID uniquely identifying this user',
    );
  }
  const claims = mapAttributes(assertion, provider.saml.attributeMapping as AttributeMapping | null);
  const mapped = typeof claims.email === 'string' ? claims.email : '';
  const email = (mapped || samlEmail(assertion)).trim();
  if (!email) throw badRequest('saml_assertion_no_email', 'SAML Assertion does not contain an email address');
  if (hasUnstorableChars(email) || [...email].length > 255)
    throw badRequest('email_address_invalid', 'Email address from the SAML IdP is invalid');
  assertVouched(provider, email);
  const providerType = `sso:${provider.provider.id}`;
  const data = identityData(provider.saml.entityId, sub, email, { ...claims, email });
  const base =
    started.redirectTo && isRedirectAllowed(started.redirectTo, deps.config.siteUrl, deps.config.uriAllowList)
      ? started.redirectTo
      : deps.config.siteUrl;

  let createdUserId: string | undefined;
  const location = await transaction(deps.db, async (tx) => {
    const now = deps.now();
    // One use per assertion, whichever flow brings it.
    if (!(await useAssertionId(tx, provider.provider.id, assertion.id, expiresAt)))
      throw notValid('the Assertion has already been used');
    if (refreshed) await updateSamlProviderRow(tx, provider.saml.id, { metadataXml: refreshed.xml }, now);
    const flow = started.flowStateId
      ? await findFlowStateById(tx, started.flowStateId, { forUpdate: true })
      : undefined;
    const { user, created } = await signInSso(
      { deps, tx, aud, ip: meta.ip },
      { provider: providerType, sub, email, data },
      provider,
    );
    createdUserId = created ? user.id : undefined;
    if (flow?.codeChallenge && flow.authCode) {
      if (flow.userId) throw badRequest('flow_state_already_used', 'State has already been used');
      await issueFlowStateCode(tx, flow.id, { userId: user.id, providerAccessToken: '', now });
      const url = new URL(base);
      url.searchParams.set('code', flow.authCode);
      return url.toString();
    }
    const issued = await createSession(deps, tx, user, 'sso/saml', meta);
    if (assertion.sessionNotOnOrAfter) await setSessionNotAfter(tx, issued.session.id, assertion.sessionNotOnOrAfter);
    const body = (await tokenResponse(deps, tx, issued)).body;
    if (flow) await deleteFlowState(tx, flow.id);
    const f: Record<string, string | number> = {
      access_token: String(body.access_token),
      token_type: 'bearer',
      expires_in: Number(body.expires_in),
      expires_at: Number(body.expires_at),
      refresh_token: String(body.refresh_token),
    };
    return `${base}#${fragment(f)}`;
  });
  // GoTrue (samlacs.go): once the new account is committed; its error is the answer (the account stays).
  if (createdUserId) await afterUserCreated(deps, createdUserId);
  // Used ids of assertions that have expired anyway are of no more use (an indexed delete).
  await deleteExpiredAssertionIds(deps.db, deps.now()).catch((err) =>
    deps.logger.warn('could not delete expired SAML assertion ids', errorFields(err)),
  );
  return location;
}

// POST /sso (GoTrue: api/sso.go SingleSignOn): the provider by id or by email domain, a flow_state
// (always; PKCE when a challenge comes), a relay state naming the AuthnRequest's ID, and the
// IdP's URL with the signed AuthnRequest.
import { transaction } from '../db/database.ts';
import { insertOAuthFlowState } from '../db/flow-state.ts';
import {
  deleteStaleRelayStates,
  findSsoProviderByDomain,
  findSsoProviderById,
  insertRelayState,
  type SsoProvider,
} from '../db/sso.ts';
import type { Deps } from '../deps.ts';
import { ApiError, badRequest, notFound, validationFailed } from '../core/errors.ts';
import { parsePkce } from '../accounts/pkce-params.ts';
import { errorFields } from '../telemetry/logger.ts';
import { authnRequestUrl } from './authn-request.ts';
import { parseIdpMetadata } from './providers.ts';

export interface SsoStart {
  provider_id?: string;
  domain?: string;
  redirect_to?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

async function findProvider(deps: Deps, p: SsoStart): Promise<SsoProvider> {
  const id = p.provider_id && p.provider_id !== NIL_UUID ? p.provider_id : '';
  if (p.provider_id && !UUID_RE.test(p.provider_id))
    throw badRequest('bad_json', 'Could not parse request body as JSON: provider_id is not a UUID');
  if (id && p.domain) throw validationFailed('Only one of provider_id or domain supported');
  if (!id && !p.domain) throw validationFailed('A provider_id or domain needs to be provided');
  const found = id
    ? await findSsoProviderById(deps.db, id.toLowerCase())
    : await findSsoProviderByDomain(deps.db, p.domain!);
  if (!found)
    throw notFound('sso_provider_not_found', id ? 'No such SSO provider' : 'No SSO provider assigned for this domain');
  if (found.provider.disabled === true) throw notFound('sso_provider_disabled', 'SSO Provider is currently disabled');
  return found;
}

export async function startSso(deps: Deps, p: SsoStart): Promise<string> {
  const provider = await findProvider(deps, p);
  const pkce = parsePkce(p);
  const meta = await parseIdpMetadata(deps, provider.saml.metadataXml).catch((err) => {
    if (err instanceof ApiError && err.status === 501) throw err;
    throw new ApiError(500, 'unexpected_failure', 'Error parsing SAML Metadata for SAML provider', undefined, err);
  });
  if (!meta.ssoUrl)
    throw new ApiError(
      500,
      'unexpected_failure',
      'Error creating SAML Authentication Request',
      undefined,
      new Error('no SingleSignOnService'),
    );
  const now = deps.now();
  const relayState = crypto.randomUUID();
  const request = await authnRequestUrl(deps.config, {
    idpSsoUrl: meta.ssoUrl,
    relayState,
    nameIdFormat: provider.saml.nameIdFormat,
    now,
    randomBytes: deps.randomBytes,
  });
  const flowStateId = crypto.randomUUID();
  const redirectTo = p.redirect_to ?? '';
  await transaction(deps.db, async (tx) => {
    await insertOAuthFlowState(tx, {
      id: flowStateId,
      providerType: 'sso/saml',
      authenticationMethod: 'sso/saml',
      challenge: pkce?.challenge,
      method: pkce?.method,
      referrer: redirectTo,
      emailOptional: false,
      now,
    });
    await insertRelayState(tx, {
      id: relayState,
      providerId: provider.provider.id,
      requestId: request.id,
      redirectTo: redirectTo || null,
      flowStateId,
      now,
    });
  });
  // Opportunistic cleanup, as GoTrue's: relay states a day old are of no use to anyone.
  try {
    await deleteStaleRelayStates(deps.db, new Date(now.getTime() - 24 * 3600 * 1000));
  } catch (err) {
    deps.logger.warn('could not delete stale SAML relay states', errorFields(err));
  }
  return request.url;
}

// Sign-in methods (EXTERNAL_*): email, phone, anonymous, the built-in OAuth providers, and
// custom providers added at run time (CUSTOM_OAUTH_*).
import { bool, each, list, opt, setting, text, upper, withDefault } from '../setting.ts';
import { parseApplePrivateKey } from '../apple-key.ts';
import { type ProviderName, PROVIDERS } from '../kinds.ts';
import { integer, parseTrustedHosts, parseUrl, seconds } from '../values.ts';

const GITLAB_URL = 'https://gitlab.com';
const ID_TOKEN_PROVIDERS: readonly ProviderName[] = ['apple', 'azure', 'facebook', 'google', 'keycloak'];

function provider(p: ProviderName) {
  const x = `EXTERNAL_${upper(p)}` as const;
  // As in GoTrue: Apple and Google are always reached at their own hosts, and only ID-token
  // providers have a nonce to skip.
  const ownHost = p === 'apple' || p === 'google';
  const url =
    p === 'keycloak'
      ? setting(`${x}_URL`, opt(parseUrl), 'required when enabled', 'Keycloak realm URL.')
      : setting(
          `${x}_URL`,
          opt(parseUrl),
          p === 'gitlab' ? GITLAB_URL : '',
          `Base URL of ${p} (self-hosted instances).`,
          ownHost
            ? { notBuilt: { because: 'ignored, as GoTrue ignores it: the provider is reached at its own host' } }
            : {},
        );
  return {
    enabled: setting(`${x}_ENABLED`, bool(false), 'false', `Enables sign-in with ${p}.`),
    clientId: setting(`${x}_CLIENT_ID`, text(), 'required when enabled', `OAuth2 client ID at ${p}.`),
    secret: setting(`${x}_SECRET`, text(), 'required when enabled', `OAuth2 client secret at ${p}.`, { secret: true }),
    redirectUri: setting(
      `${x}_REDIRECT_URI`,
      opt(parseUrl),
      'required when enabled',
      `Callback URL registered at ${p}.`,
    ),
    url: url.map((v) => v ?? (p === 'gitlab' ? GITLAB_URL : undefined)),
    skipNonceCheck: setting(
      `${x}_SKIP_NONCE_CHECK`,
      bool(false),
      'false',
      `Skip the nonce check of ${p} ID tokens.`,
      ID_TOKEN_PROVIDERS.includes(p)
        ? {}
        : { notBuilt: { because: 'only apple, azure, facebook, google and keycloak ID tokens carry a nonce' } },
    ),
    emailOptional: setting(
      `${x}_EMAIL_OPTIONAL`,
      bool(false),
      'false',
      `Allow ${p} accounts without an email address.`,
    ),
    storeTokens: setting(
      `${x}_STORE_TOKENS`,
      bool(false),
      'false',
      `Keep the refresh token ${p} returns at sign-in and identity linking, encrypted with SECURITY_DB_ENCRYPTION_* (required), so POST /user/identities/{provider}/token can hand out a fresh access token. authsvc only.`,
      p === 'twitter' ? { notBuilt: { because: 'twitter signs in with OAuth 1.0a, which has no refresh token' } } : {},
    ),
  };
}

export const external = {
  external: {
    email: {
      enabled: setting(
        'EXTERNAL_EMAIL_ENABLED',
        bool(true),
        'true',
        'When false, email signup and sign-in are disabled.',
      ),
      magicLinkEnabled: setting(
        'EXTERNAL_EMAIL_MAGIC_LINK_ENABLED',
        bool(true),
        'true',
        'When false, magic links and email OTP sign-in are disabled.',
      ),
      authorizedAddresses: setting(
        'EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES',
        list(),
        '',
        'If set, the only addresses email may be sent to, comma-separated.',
      ),
    },
    phone: {
      enabled: setting(
        'EXTERNAL_PHONE_ENABLED',
        bool(false),
        'false',
        'When false, phone signup and sign-in are disabled.',
      ),
    },
    anonymousUsers: {
      enabled: setting('EXTERNAL_ANONYMOUS_USERS_ENABLED', bool(false), 'false', 'Enables anonymous sign-in.'),
    },
    redirectUrl: setting(
      'EXTERNAL_REDIRECT_URL',
      opt(parseUrl),
      '',
      'Where every OAuth callback sends the browser, ahead of redirect_to and SITE_URL (as GoTrue).',
    ),
    flowStateExpiry: setting(
      'EXTERNAL_FLOW_STATE_EXPIRY_DURATION',
      withDefault((raw) => Math.max(300, seconds(raw)), 300),
      '300',
      "Lifetime in seconds, at least 300, of a flow state: an OAuth sign-in's state between /authorize and /callback, and a PKCE code until POST /token?grant_type=pkce.",
    ),
    iosBundleId: setting(
      'EXTERNAL_IOS_BUNDLE_ID',
      text(),
      '',
      'iOS bundle ID accepted as one more audience of Apple ID tokens (POST /token?grant_type=id_token), as GoTrue.',
    ),
    providers: each(PROVIDERS, provider),
    // Sign in with Apple's client secret is a JWT signed with the team's key; GoTrue takes it ready-made.
    appleKey: {
      privateKey: setting(
        'EXTERNAL_APPLE_PRIVATE_KEY',
        opt(parseApplePrivateKey),
        '',
        "Apple's .p8 key (a PKCS#8 PEM of an EC P-256 key), or on Node, Bun and Deno the path of the file (on Workers only the PEM works). With EXTERNAL_APPLE_KEY_ID and EXTERNAL_APPLE_TEAM_ID, and EXTERNAL_APPLE_SECRET empty, authsvc signs the client secret itself (ES256, valid one hour, signed again 5 minutes before it expires). authsvc only.",
        { secret: true },
      ),
      keyId: setting(
        'EXTERNAL_APPLE_KEY_ID',
        text(),
        '',
        'Key ID of EXTERNAL_APPLE_PRIVATE_KEY: the kid of the client secret authsvc signs. authsvc only.',
      ),
      teamId: setting(
        'EXTERNAL_APPLE_TEAM_ID',
        text(),
        '',
        'Apple developer team ID: the iss of the client secret authsvc signs. authsvc only.',
      ),
    },
  },
  customOAuth: {
    enabled: setting(
      'CUSTOM_OAUTH_ENABLED',
      bool(true),
      'true',
      'Custom OAuth 2 / OIDC providers (custom:<id>) managed through /admin/custom-providers and usable at /authorize, /callback and the id_token grant.',
    ),
    maxProviders: setting(
      'CUSTOM_OAUTH_MAX_PROVIDERS',
      withDefault(integer(0), 0),
      '0',
      'Most custom providers that may exist; 0 is no limit.',
    ),
    externalUrl: setting(
      'CUSTOM_OAUTH_EXTERNAL_URL',
      opt(parseUrl),
      'API_EXTERNAL_URL',
      'Base URL of the callback (<url>/callback) that custom providers redirect to.',
    ),
    trustedHosts: setting(
      'CUSTOM_OAUTH_TRUSTED_HOSTS',
      withDefault(parseTrustedHosts, []),
      '',
      'host:port pairs, comma-separated, that custom providers may use although they are private, loopback or plain http (a local test issuer, an IdP inside your network); every other provider URL must be https on a public address. authsvc only.',
    ),
  },
};

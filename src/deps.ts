// Everything a handler may touch, built once by an adapter. Tests build it with real parts
// and swap only what leaves the machine (mailer, fetch).
import type { Context } from '@opentelemetry/api';
import type { Config } from './config/types.ts';
import type { KeySet } from './crypto/jwt.ts';
import type { PasswordHasher } from './crypto/password.ts';
import type { Database } from './db/database.ts';
import type { RateLimitStore } from './db/rate-limit-store.ts';
import type { Mailer } from './mail/mailer.ts';
import type { OAuthCache } from './oauth/context.ts';
import type { ResolveHost } from './oauth/url-guard.ts';
import type { SmsProvider } from './sms/provider.ts';
import type { LoadSamlXml } from './crypto/saml-xml.ts';
import type { Logger } from './telemetry/logger.ts';

export interface Deps {
  config: Config;
  db: Database;
  keys: KeySet;
  mailer: Mailer;
  /** The SMS_PROVIDER's client; unset when none is configured (every send then fails). */
  sms?: SmsProvider;
  hasher: PasswordHasher;
  fetch: typeof fetch;
  now: () => Date;
  randomBytes: (n: number) => Uint8Array;
  logger: Logger;
  version: string;
  /** Per-client rate-limit buckets; by default the store RATE_LIMIT_STORE names. */
  limiter?: RateLimitStore;
  /** OIDC discovery, JWKS and client-auth styles of the OAuth providers; createApp makes one. */
  oauthCache?: OAuthCache;
  /** TRACING_ENABLED: the request's span, under which hook calls hang their own (deps-telemetry.ts). */
  traceParent?: Context;
  /**
   * The request's client address (GoTrue's utilities.GetIPAddress), set per request while a hook
   * is enabled: every hook's `metadata.ip_address`.
   */
  clientIp?: string;
  /**
   * DNS look-up for the custom providers' SSRF guard (node:dns on Node, Bun and Deno). Unset on
   * Workers, whose fetch reaches no private network: only literal addresses are checked there.
   */
  resolveHost?: ResolveHost;
  /**
   * SAML's XML parsing and signature checks (src/adapters/saml-xml.ts, over node:crypto), loaded
   * on first use. Unset on Workers: SSO there answers 501 saml_not_supported_on_runtime.
   */
  samlXml?: LoadSamlXml;
  /**
   * The migration versions this build carries (migrations/*.sql): GET /health/ready answers 503
   * while one of them is not recorded in the database.
   */
  migrations: readonly string[];
}

export function cryptoRandomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

// Every setting, nested as Config reads it: one file per section. Config, the flat schema, the
// docs table (npm run docs:config), GET /admin/config and the unknown-name warnings come from here.
import { api } from './api.ts';
import { db } from './db.ts';
import { external } from './external.ts';
import { hooks } from './hooks.ts';
import { jwt } from './jwt.ts';
import { mail } from './mail.ts';
import { mfa } from './mfa.ts';
import { oauthServer } from './oauth-server.ts';
import { password } from './password.ts';
import { rateLimit } from './rate-limit.ts';
import { saml } from './saml.ts';
import { security } from './security.ts';
import { sessions } from './sessions.ts';
import { site } from './site.ts';
import { sms } from './sms.ts';
import { telemetry } from './telemetry.ts';
import { web3 } from './web3.ts';

/** The sections, titled, in the order docs/configuration.md lists them. */
export const TITLED_SECTIONS = [
  ['Site', site],
  ['HTTP listener', api],
  ['Database', db],
  ['Logs, traces and metrics', telemetry],
  ['Access tokens', jwt],
  ['Sign-in methods and OAuth providers', external],
  ['Rate limits', rateLimit],
  ['OAuth 2.1 server', oauthServer],
  ['Passwords', password],
  ['SAML single sign-on', saml],
  ['Web3 sign-in', web3],
  ['MFA, WebAuthn and passkeys', mfa],
  ['Security', security],
  ['Sessions', sessions],
  ['Email', mail],
  ['SMS', sms],
  ['Hooks', hooks],
] as const;

export const SECTIONS = {
  ...site,
  ...api,
  ...db,
  ...telemetry,
  ...jwt,
  ...external,
  ...rateLimit,
  ...oauthServer,
  ...password,
  ...saml,
  ...web3,
  ...mfa,
  ...security,
  ...sessions,
  ...mail,
  ...sms,
  ...hooks,
};

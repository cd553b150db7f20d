// The site: its URL and the redirect allow list, sign-up, the admin console.
import { bool, list, opt, text, setting } from '../setting.ts';
import { parseBool, parseUrl } from '../values.ts';

export const site = {
  siteUrl: setting(
    'SITE_URL',
    opt(parseUrl),
    'required (local mode: http://localhost:3000)',
    'Base URL of the site, used in emails. Any URL on its host is an allowed redirect_to.',
  ).map((v) => v ?? ''),
  uriAllowList: setting(
    'URI_ALLOW_LIST',
    list(),
    '',
    'Comma-separated URLs also allowed as redirect_to; globs allowed in host and path.',
  ),
  operatorToken: setting(
    'OPERATOR_TOKEN',
    text(),
    '',
    'Multi-instance mode only (unsupported): secret shared with an operator.',
    { secret: true, notBuilt: { because: 'multi-instance mode is not supported' } },
  ),
  disableSignup: setting(
    'DISABLE_SIGNUP',
    bool(false),
    'false',
    'When true, new users can only be created by invitation or by an admin.',
  ),
  console: {
    enabled: setting(
      'CONSOLE_ENABLED',
      opt(parseBool),
      'true in local mode, else false',
      'Serves the admin console (a browser client of the admin API) at /console/ and /auth/v1/console/; off, those paths answer 404. Not a GoTrue setting.',
    ).map((v, local) => v ?? local),
  },
};

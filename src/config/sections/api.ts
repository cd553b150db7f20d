// The HTTP listener (API_*).
import { list, opt, text, textOr, withDefault, setting } from '../setting.ts';
import { integer, parseUrl, seconds } from '../values.ts';

export const api = {
  api: {
    host: setting('API_HOST', textOr(''), '', 'Host name or address to listen on; empty means all interfaces.'),
    port: setting('PORT', withDefault(integer(0, 65535), 8081), '8081', 'Port to listen on.'),
    endpoint: setting('API_ENDPOINT', text(), '', 'Multi-instance mode only (unsupported).', {
      notBuilt: { because: 'multi-instance mode is not supported' },
    }),
    externalUrl: setting(
      'API_EXTERNAL_URL',
      opt(parseUrl),
      'required (local mode: http://localhost:<PORT>)',
      'URL at which the service is reachable.',
    ).map((v) => v ?? ''),
    requestIdHeader: setting('REQUEST_ID_HEADER', text(), '', 'Incoming header from which the request ID is taken.'),
    maxRequestDuration: setting(
      'API_MAX_REQUEST_DURATION',
      withDefault(seconds, 10),
      '10',
      'Longest a request may run, in seconds or Go syntax (10s).',
    ),
    corsAllowedHeaders: setting(
      'CORS_ALLOWED_HEADERS',
      list(),
      '',
      'Extra request headers allowed by CORS, comma-separated.',
    ),
  },
};

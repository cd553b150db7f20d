// Session lifetime limits (SESSIONS_*); seconds, 0 is no limit.
import { bool, withDefault, setting } from '../setting.ts';
import { parseList, seconds } from '../values.ts';

export const sessions = {
  sessions: {
    timebox: setting(
      'SESSIONS_TIMEBOX',
      withDefault(seconds, 0),
      '0',
      'Longest life of a session from its sign-in (e.g. 24h); a refresh after it is refused with session_expired. 0: no limit.',
    ),
    singlePerUser: setting(
      'SESSIONS_SINGLE_PER_USER',
      bool(false),
      'false',
      'Only the most recently refreshed session of a user (per tag) may refresh; the others get session_expired.',
    ),
    tags: setting(
      'SESSIONS_TAGS',
      withDefault(parseList, []),
      '',
      'Session tags, comma-separated: with SESSIONS_SINGLE_PER_USER one session per tag; untagged sessions count as the first.',
    ),
    allowLowAal: setting(
      'SESSIONS_ALLOW_LOW_AAL',
      withDefault(seconds, 0),
      '0',
      'How long after its sign-in an aal1 session of a user with a verified MFA factor may still refresh (e.g. 24h); later refreshes get session_expired until a factor is verified. 0: no limit.',
    ),
    inactivityTimeout: setting(
      'SESSIONS_INACTIVITY_TIMEOUT',
      withDefault(seconds, 0),
      '0',
      'Longest time between refreshes of a session (e.g. 8h); a refresh after it is refused with session_expired. 0: no limit.',
    ),
  },
};

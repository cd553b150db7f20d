// Password rules and the Have I Been Pwned check (PASSWORD_*).
import { bool, textOr, withDefault, setting } from '../setting.ts';
import { atLeast, parseRequiredCharacters, parseUrl } from '../values.ts';

export const password = {
  password: {
    minLength: setting(
      'PASSWORD_MIN_LENGTH',
      withDefault(atLeast(6), 6),
      '6',
      'Minimum password length in bytes; values below 6 count as 6.',
    ),
    requiredCharacters: setting(
      'PASSWORD_REQUIRED_CHARACTERS',
      withDefault(parseRequiredCharacters, []),
      '',
      'Character sets separated by ":"; a password needs one of each. "\\:" is a literal colon.',
    ),
    hibp: {
      enabled: setting(
        'PASSWORD_HIBP_ENABLED',
        bool(false),
        'false',
        'Refuse new passwords found in Have I Been Pwned (a k-anonymity range query: only 5 hex digits of the SHA-1 leave the server); the password grant reports them in weak_password.',
      ),
      failClosed: setting(
        'PASSWORD_HIBP_FAIL_CLOSED',
        bool(false),
        'false',
        'When Have I Been Pwned cannot be reached: refuse the password change with 500 (true) or allow it and log a warning (false).',
      ),
      userAgent: setting(
        'PASSWORD_HIBP_USER_AGENT',
        textOr('https://github.com/supabase/gotrue'),
        'https://github.com/supabase/gotrue',
        'User-Agent of the Have I Been Pwned look-ups.',
      ),
      apiUrl: setting(
        'PASSWORD_HIBP_API_URL',
        withDefault(parseUrl, 'https://api.pwnedpasswords.com'),
        'https://api.pwnedpasswords.com',
        'Base URL of the Pwned Passwords range API (a mirror or proxy); authsvc only.',
      ),
    },
  },
};

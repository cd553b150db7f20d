// Multi-factor authentication (MFA_*), the WebAuthn relying party (WEBAUTHN_*) and passkeys (PASSKEY_*).
import { bool, list, textOr, withDefault, setting } from '../setting.ts';
import { integer, nonNegativeNumber, oneOf, otpLength, seconds, secondsOr } from '../values.ts';

export const mfa = {
  mfa: {
    challengeExpiry: setting(
      'MFA_CHALLENGE_EXPIRY_DURATION',
      withDefault((raw) => Math.max(300, seconds(raw)), 300),
      '300',
      'Seconds a factor challenge may be verified; values below 300 count as 300.',
    ),
    factorExpiry: setting(
      'MFA_FACTOR_EXPIRY_DURATION',
      withDefault((raw) => Math.max(300, seconds(raw)), 300),
      '300s',
      'Unverified factors never challenged and older than this are deleted at the next enrolment; an unverified WebAuthn factor older than this goes once its challenges expired (at least 300 s).',
    ),
    maxEnrolledFactors: setting(
      'MFA_MAX_ENROLLED_FACTORS',
      withDefault(nonNegativeNumber, 10),
      '10',
      'Most factors (verified or not) a user may have.',
    ),
    maxVerifiedFactors: setting(
      'MFA_MAX_VERIFIED_FACTORS',
      withDefault(integer(0), 10),
      '10',
      'Most verified factors a user may have.',
    ),
    totp: {
      enrollEnabled: setting('MFA_TOTP_ENROLL_ENABLED', bool(true), 'true', 'Users may enrol TOTP factors.'),
      verifyEnabled: setting(
        'MFA_TOTP_VERIFY_ENABLED',
        bool(true),
        'true',
        'TOTP factors may be challenged and verified.',
      ),
    },
    phone: {
      enrollEnabled: setting(
        'MFA_PHONE_ENROLL_ENABLED',
        bool(false),
        'false',
        'Users may enrol phone (SMS/WhatsApp) factors.',
      ),
      verifyEnabled: setting(
        'MFA_PHONE_VERIFY_ENABLED',
        bool(false),
        'false',
        'Phone factors may be challenged and verified.',
      ),
      otpLength: setting(
        'MFA_PHONE_OTP_LENGTH',
        withDefault(otpLength, 6),
        '6',
        'Digits of a phone factor code, 6 to 10 (other values count as 6).',
      ),
      maxFrequency: setting(
        'MFA_PHONE_MAX_FREQUENCY',
        withDefault(secondsOr(60), 60),
        '1m',
        'Shortest time between two codes texted for one phone factor.',
      ),
      template: setting(
        'MFA_PHONE_TEMPLATE',
        textOr('Your code is {{ .Code }}'),
        'Your code is {{ .Code }}',
        'Text of a phone factor code.',
      ),
    },
    recoveryCodes: {
      enrollEnabled: setting(
        'MFA_RECOVERY_CODES_ENROLL_ENABLED',
        bool(false),
        'false',
        'Users may generate MFA recovery codes (an aal2 session is needed).',
      ),
      verifyEnabled: setting(
        'MFA_RECOVERY_CODES_VERIFY_ENABLED',
        bool(false),
        'false',
        'MFA recovery codes may be used to reach aal2.',
      ),
      count: setting(
        'MFA_RECOVERY_CODES_COUNT',
        withDefault(integer(5, 20), 10),
        '10',
        'Recovery codes in a set, 5 to 20 (other values stop start-up).',
      ),
    },
    webauthn: {
      enrollEnabled: setting(
        'MFA_WEB_AUTHN_ENROLL_ENABLED',
        bool(false),
        'false',
        'Users may enrol WebAuthn factors (security keys, platform authenticators); needs the WEBAUTHN_RP_* settings.',
      ),
      verifyEnabled: setting(
        'MFA_WEB_AUTHN_VERIFY_ENABLED',
        bool(false),
        'false',
        'WebAuthn factors may be challenged and verified.',
      ),
    },
  },
  webauthn: {
    rpId: setting(
      'WEBAUTHN_RP_ID',
      textOr(''),
      'required for WebAuthn factors and passkeys',
      "Relying party ID: the site's registrable domain (e.g. example.com), shared by WebAuthn factors and passkeys.",
    ),
    rpDisplayName: setting(
      'WEBAUTHN_RP_DISPLAY_NAME',
      textOr(''),
      'required for WebAuthn factors and passkeys',
      'Relying party name shown by the browser or authenticator.',
    ),
    rpOrigins: setting(
      'WEBAUTHN_RP_ORIGINS',
      list(),
      'required for WebAuthn factors and passkeys',
      'Comma-separated origins (e.g. https://app.example.com) a WebAuthn ceremony may come from.',
    ),
    challengeExpiry: setting(
      'WEBAUTHN_CHALLENGE_EXPIRY_DURATION',
      withDefault(secondsOr(300), 300),
      '5m',
      'Lifetime of a passkey registration or sign-in challenge (WebAuthn factors use MFA_CHALLENGE_EXPIRY_DURATION).',
    ),
  },
  passkey: {
    enabled: setting(
      'PASSKEY_ENABLED',
      bool(false),
      'false',
      'Enables passkeys: sign-in with a discoverable WebAuthn credential, and the /passkeys endpoints.',
    ),
    maxPerUser: setting(
      'PASSKEY_MAX_PASSKEYS_PER_USER',
      withDefault(integer(0), 10),
      '10',
      'Most passkeys a user may register.',
    ),
    userVerification: setting(
      'PASSKEY_USER_VERIFICATION',
      withDefault(oneOf(['required', 'preferred', 'discouraged']), 'required'),
      'required',
      'User verification (PIN, biometrics) asked of passkeys, which sign in alone: required (a ceremony without it is refused), preferred or discouraged (GoTrue: preferred). WebAuthn MFA factors always use preferred.',
    ),
  },
};

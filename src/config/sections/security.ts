// Refresh-token rotation, password-change rules, captcha, encryption at rest (SECURITY_*), the audit log.
import { bool, opt, text, textOr, withDefault, setting } from '../setting.ts';
import { oneOf, parseDecryptionKeys, parseUrl, seconds, secondsOr } from '../values.ts';

export const security = {
  security: {
    dbEncryption: {
      encrypt: setting(
        'SECURITY_DB_ENCRYPTION_ENCRYPT',
        bool(false),
        'false',
        "Store TOTP secrets and phone factor codes encrypted (GoTrue's format: AES-256-GCM under a per-row HKDF-SHA256 key); values written plain or under an older key are re-encrypted when next verified.",
      ),
      encryptionKeyId: setting(
        'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID',
        textOr(''),
        'required when encrypting',
        'Id of the key new values are encrypted with; it must also be in SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS.',
      ),
      encryptionKey: setting(
        'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY',
        textOr(''),
        'required when encrypting',
        'The encryption key: 32 random bytes in unpadded base64url.',
        { secret: true },
      ),
      decryptionKeys: setting(
        'SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS',
        withDefault(parseDecryptionKeys, {}),
        '',
        'Keys that open stored values, as id:key,id:key (each 32 bytes in unpadded base64url); read even when SECURITY_DB_ENCRYPTION_ENCRYPT is false, so values encrypted before stay readable.',
        { secret: true },
      ),
    },
    refreshTokenRotationEnabled: setting(
      'SECURITY_REFRESH_TOKEN_ROTATION_ENABLED',
      bool(true),
      'true',
      'Detect refresh-token reuse and revoke the whole family.',
    ),
    // 10 s, not GoTrue's 0: GoTrue always re-answers the immediate predecessor, the spec only inside
    // this window, so 0 would sign out every client whose refresh response was lost (Supabase's hosted default is 10 s).
    refreshTokenReuseInterval: setting(
      'SECURITY_REFRESH_TOKEN_REUSE_INTERVAL',
      withDefault(seconds, 10),
      '10',
      "Seconds during which the previous refresh token may be exchanged again for the same child; later reuse revokes the session's tokens.",
    ),
    updatePasswordRequireReauthentication: setting(
      'SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION',
      bool(false),
      'false',
      'A password change needs a reauthentication nonce.',
    ),
    updatePasswordRequireCurrentPassword: setting(
      'SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD',
      bool(false),
      'false',
      'A password change needs the current password.',
      { secret: true },
    ),
    manualLinkingEnabled: setting(
      'SECURITY_MANUAL_LINKING_ENABLED',
      bool(false),
      'false',
      'Allow users to link identities themselves.',
    ),
    sbForwardedForEnabled: setting(
      'SECURITY_SB_FORWARDED_FOR_ENABLED',
      bool(false),
      'false',
      'Take the client IP from the Sb-Forwarded-For header.',
    ),
    captcha: {
      enabled: setting(
        'SECURITY_CAPTCHA_ENABLED',
        bool(false),
        'false',
        'Check the captcha token on signup, /token (every grant type but refresh_token, pkce and id_token), /otp, /magiclink, /recover and /resend.',
      ),
      provider: setting(
        'SECURITY_CAPTCHA_PROVIDER',
        withDefault(oneOf(['hcaptcha', 'turnstile']), 'hcaptcha'),
        'hcaptcha',
        'hcaptcha or turnstile.',
      ),
      secret: setting(
        'SECURITY_CAPTCHA_SECRET',
        text(),
        'required when captcha is enabled',
        'Secret from the captcha provider.',
        { secret: true },
      ),
      timeout: setting(
        'SECURITY_CAPTCHA_TIMEOUT',
        withDefault(secondsOr(10), 10),
        '10',
        'Timeout of the captcha verification request.',
      ),
      verifyUrl: setting(
        'SECURITY_CAPTCHA_VERIFY_URL',
        opt(parseUrl),
        "the provider's siteverify URL",
        "Where captcha tokens are verified instead of the provider's public URL (a proxy, or a test's fake); authsvc only.",
      ),
    },
  },
  auditLog: {
    disablePostgres: setting(
      'AUDIT_LOG_DISABLE_POSTGRES',
      bool(false),
      'false',
      'Write no audit_log_entries rows; every audit entry is still logged as audit_event.',
    ),
  },
};

// Rate limits: per IP (RATE_LIMIT_* and the feature-named ones) and per address (emails, SMS).
import { text, withDefault, setting } from '../setting.ts';
import type { SendLimit } from '../kinds.ts';
import { nonNegativeNumber, oneOf, parseSendLimit } from '../values.ts';

const DEFAULT_SEND_LIMIT: SendLimit = { count: 30, periodSeconds: 3600, form: 'window' };

export const rateLimit = {
  rateLimit: {
    header: setting('RATE_LIMIT_HEADER', text(), '', 'Header holding the client IP used for per-IP rate limits.'),
    store: setting(
      'RATE_LIMIT_STORE',
      withDefault(oneOf(['memory', 'postgres']), 'memory'),
      'memory',
      'Where rate-limit counters live: memory (one instance) or postgres (shared).',
    ),
    emailSent: setting(
      'RATE_LIMIT_EMAIL_SENT',
      withDefault(parseSendLimit, DEFAULT_SEND_LIMIT),
      '30',
      'Emails per hour (N), or a bucket of N refilled one per duration (N/duration); 0 blocks all.',
    ),
    smsSent: setting(
      'RATE_LIMIT_SMS_SENT',
      withDefault(parseSendLimit, DEFAULT_SEND_LIMIT),
      '30',
      'SMS per hour (N), or N/duration as for RATE_LIMIT_EMAIL_SENT.',
    ),
    tokenRefresh: setting(
      'RATE_LIMIT_TOKEN_REFRESH',
      withDefault(nonNegativeNumber, 150),
      '150',
      '/token requests per IP per 5 minutes.',
    ),
    verify: setting(
      'RATE_LIMIT_VERIFY',
      withDefault(nonNegativeNumber, 30),
      '30',
      '/verify requests per IP per 5 minutes.',
    ),
    otp: setting(
      'RATE_LIMIT_OTP',
      withDefault(nonNegativeNumber, 30),
      '30',
      'OTP-sending requests per IP per 5 minutes.',
    ),
    anonymousUsers: setting(
      'RATE_LIMIT_ANONYMOUS_USERS',
      withDefault(nonNegativeNumber, 30),
      '30',
      'Anonymous sign-ins per IP per hour.',
    ),
    web3: setting(
      'RATE_LIMIT_WEB3',
      withDefault(nonNegativeNumber, 30),
      '30',
      'Web3 sign-ins (POST /token?grant_type=web3) per IP per 5 minutes, burst 30; this grant is not counted by RATE_LIMIT_TOKEN_REFRESH.',
    ),
    sso: setting(
      'RATE_LIMIT_SSO',
      withDefault(nonNegativeNumber, 30),
      '30',
      'SSO sign-in starts (POST /sso) per IP per 5 minutes, burst 30.',
    ),
    oauthClientRegister: setting(
      'RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER',
      withDefault(nonNegativeNumber, 10),
      '10',
      'OAuth dynamic client registrations (POST /oauth/clients/register) per IP per 5 minutes (burst 30).',
    ),
    samlAssertion: setting(
      'SAML_RATE_LIMIT_ASSERTION',
      withDefault(nonNegativeNumber, 15),
      '15',
      'SAML responses (POST /sso/saml/acs) per IP per 5 minutes, burst 30.',
    ),
    mfaChallengeAndVerify: setting(
      'MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY',
      withDefault(nonNegativeNumber, 15),
      '15',
      'Factor challenges, and separately verifications, per IP per minute (burst 30).',
    ),
    passkey: setting(
      'RATE_LIMIT_PASSKEY',
      withDefault(nonNegativeNumber, 30),
      '30',
      'Passkey sign-in option requests per IP per 5 minutes.',
    ),
  },
};

// The fixed lists settings are made of (providers, SMS providers, hook kinds, account-change
// notifications) and the small value types their parsers return.

export const PROVIDERS = [
  'apple',
  'azure',
  'bitbucket',
  'discord',
  'facebook',
  'figma',
  'github',
  'gitlab',
  'google',
  'keycloak',
  'linkedin',
  'notion',
  'spotify',
  'slack',
  'twitch',
  'twitter',
  'workos',
] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** GoTrue's native SMS providers (sms_provider.GetSmsProvider); nothing else is accepted. */
export const SMS_PROVIDERS = ['twilio', 'twilio_verify', 'messagebird', 'textlocal', 'vonage'] as const;
export type SmsProviderName = (typeof SMS_PROVIDERS)[number];

/** GoTrue's hook kinds (HookConfiguration), as in HOOK_<KIND>_ENABLED / _URI / _SECRETS. */
export const HOOK_KINDS = [
  'MFA_VERIFICATION_ATTEMPT',
  'PASSWORD_VERIFICATION_ATTEMPT',
  'CUSTOM_ACCESS_TOKEN',
  'SEND_EMAIL',
  'SEND_SMS',
  'BEFORE_USER_CREATED',
  'AFTER_USER_CREATED',
] as const;
export type HookKind = (typeof HOOK_KINDS)[number];
/** Where a hook is called: an HTTP(S) endpoint (Standard Webhooks) or a Postgres function. */
export type HookTarget = { transport: 'http'; url: string } | { transport: 'pg'; schema: string; fn: string };

export type SendLimit = { count: number; periodSeconds: number; form: 'window' | 'bucket' };

/** The account-change notifications, by GoTrue's names (`<kind>_notification` is the email's action type). */
export const NOTIFICATION_KINDS = [
  'password_changed',
  'email_changed',
  'phone_changed',
  'identity_linked',
  'identity_unlinked',
  'mfa_factor_enrolled',
  'mfa_factor_unenrolled',
  // authsvc's own: GoTrue has no passkey notifications.
  'passkey_added',
  'passkey_removed',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

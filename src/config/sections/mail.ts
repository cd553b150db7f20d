// Email: the transport (SMTP_*, RESEND_*) and what is sent (MAILER_*).
import { NOTIFICATIONS } from '../notifications.ts';
import { bool, each, list, setting, text, textOr, upper, withDefault } from '../setting.ts';
import { NOTIFICATION_KINDS } from '../kinds.ts';
import { integer, otpLength, parseUrl, secondsOr, wholeSecondsOr } from '../values.ts';

const SUBJECTS = {
  INVITE: 'You have been invited',
  CONFIRMATION: 'Confirm Your Signup',
  RECOVERY: 'Reset Your Password',
  MAGIC_LINK: 'Your Magic Link',
  EMAIL_CHANGE: 'Confirm Email Change',
  REAUTHENTICATION: 'Confirm reauthentication',
} as const;

// Account-change notifications (GoTrue's MAILER_NOTIFICATIONS_*): off by default; a failed send is only logged.
const NOTIFICATION_ACTIONS = NOTIFICATION_KINDS.map((k) => `${k}_notification` as const);
const about = (action: (typeof NOTIFICATION_ACTIONS)[number]) =>
  NOTIFICATIONS[upper(action).replace(/_NOTIFICATION$/, '') as keyof typeof NOTIFICATIONS];

/** Each kind's built-in subject (GoTrue's defaults), keyed as `mailer.subjects`. */
export const DEFAULT_SUBJECTS = {
  invite: SUBJECTS.INVITE,
  confirmation: SUBJECTS.CONFIRMATION,
  recovery: SUBJECTS.RECOVERY,
  magicLink: SUBJECTS.MAGIC_LINK,
  emailChange: SUBJECTS.EMAIL_CHANGE,
  reauthentication: SUBJECTS.REAUTHENTICATION,
  ...Object.fromEntries(NOTIFICATION_ACTIONS.map((a) => [a, about(a).subject])),
} as Record<
  | 'invite'
  | 'confirmation'
  | 'recovery'
  | 'magicLink'
  | 'emailChange'
  | 'reauthentication'
  | (typeof NOTIFICATION_ACTIONS)[number],
  string
>;

export const mail = {
  smtp: {
    host: setting('SMTP_HOST', text(), 'required unless RESEND_API_KEY is set (local mode: none)', 'Mail server host.'),
    port: setting('SMTP_PORT', withDefault(integer(1, 65535), 587), '587', 'Mail server port.'),
    user: setting('SMTP_USER', text(), '', 'Mail server user name.'),
    pass: setting('SMTP_PASS', text(), '', 'Mail server password.', { secret: true }),
    adminEmail: setting(
      'SMTP_ADMIN_EMAIL',
      text(),
      'required (local mode: admin@localhost)',
      'From address of all emails.',
    ).map((v) => v ?? ''),
    senderName: setting('SMTP_SENDER_NAME', text(), 'SMTP_ADMIN_EMAIL', 'Sender name.'),
    maxFrequency: setting(
      'SMTP_MAX_FREQUENCY',
      withDefault(secondsOr(900), 900),
      '900',
      'Minimum seconds between confirmation or recovery emails to one user.',
    ),
  },
  resend: {
    apiKey: setting('RESEND_API_KEY', text(), '', 'Send email through Resend instead of SMTP.', { secret: true }),
    baseUrl: setting(
      'RESEND_BASE_URL',
      withDefault(parseUrl, 'https://api.resend.com'),
      'https://api.resend.com',
      'Resend API base URL.',
    ),
  },
  mailer: {
    autoconfirm: setting(
      'MAILER_AUTOCONFIRM',
      bool(false),
      'false',
      'When true, email addresses need no confirmation.',
    ),
    allowUnverifiedEmailSignIns: setting(
      'MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS',
      bool(false),
      'false',
      'Allow sign-in before the email address is confirmed.',
      { notBuilt: { because: 'sign-in before confirming the address is not built (authsvc stays strict)' } },
    ),
    secureEmailChangeEnabled: setting(
      'MAILER_SECURE_EMAIL_CHANGE_ENABLED',
      bool(true),
      'true',
      'An email change must be confirmed at both addresses.',
    ),
    otpExp: setting(
      'MAILER_OTP_EXP',
      withDefault(wholeSecondsOr(86400), 86400),
      '86400',
      'Validity of an email link or OTP in seconds.',
    ),
    otpLength: setting(
      'MAILER_OTP_LENGTH',
      withDefault(otpLength, 6),
      '6',
      'Digits of an email OTP, 6 to 10 (other values count as 6).',
    ),
    templateMaxSize: setting(
      'MAILER_TEMPLATE_MAX_SIZE',
      withDefault(integer(1), 1_000_000),
      '1000000',
      'Bytes read of a fetched email template (the rest is cut off).',
    ),
    templateMaxAge: setting(
      'MAILER_TEMPLATE_MAX_AGE',
      withDefault(secondsOr(600), 600),
      '600',
      'Seconds a fetched email template is used before it is fetched again.',
    ),
    templateRetryInterval: setting(
      'MAILER_TEMPLATE_RETRY_INTERVAL',
      withDefault(secondsOr(10), 10),
      '10',
      'Seconds before a failed template fetch is tried again (the last good template, else the built-in one, is used meanwhile).',
    ),
    templateReloadingEnabled: setting(
      'MAILER_TEMPLATE_RELOADING_ENABLED',
      bool(false),
      'false',
      'GoTrue: reload templates in the background before they expire.',
      { notBuilt: { because: 'a template is fetched when a mail needs it (docs/email-templates.md)' } },
    ),
    externalHosts: setting(
      'MAILER_EXTERNAL_HOSTS',
      list(),
      '',
      'Other host names under which the service is reachable, comma-separated.',
      { notBuilt: { because: 'links in emails always use API_EXTERNAL_URL' } },
    ),
    urlPaths: {
      invite: setting('MAILER_URLPATHS_INVITE', textOr('/verify'), '/verify', 'URL path of invitation links.'),
      confirmation: setting(
        'MAILER_URLPATHS_CONFIRMATION',
        textOr('/verify'),
        '/verify',
        'URL path of confirmation links.',
      ),
      recovery: setting(
        'MAILER_URLPATHS_RECOVERY',
        textOr('/verify'),
        '/verify',
        'URL path of recovery and magic links.',
      ),
      emailChange: setting(
        'MAILER_URLPATHS_EMAIL_CHANGE',
        textOr('/verify'),
        '/verify',
        'URL path of email-change links.',
      ),
    },
    subjects: {
      invite: setting(
        'MAILER_SUBJECTS_INVITE',
        textOr(SUBJECTS.INVITE),
        SUBJECTS.INVITE,
        'Subject of invitation emails.',
      ),
      confirmation: setting(
        'MAILER_SUBJECTS_CONFIRMATION',
        textOr(SUBJECTS.CONFIRMATION),
        SUBJECTS.CONFIRMATION,
        'Subject of confirmation emails.',
      ),
      recovery: setting(
        'MAILER_SUBJECTS_RECOVERY',
        textOr(SUBJECTS.RECOVERY),
        SUBJECTS.RECOVERY,
        'Subject of recovery emails.',
      ),
      magicLink: setting(
        'MAILER_SUBJECTS_MAGIC_LINK',
        textOr(SUBJECTS.MAGIC_LINK),
        SUBJECTS.MAGIC_LINK,
        'Subject of magic-link emails.',
      ),
      emailChange: setting(
        'MAILER_SUBJECTS_EMAIL_CHANGE',
        textOr(SUBJECTS.EMAIL_CHANGE),
        SUBJECTS.EMAIL_CHANGE,
        'Subject of email-change emails.',
      ),
      reauthentication: setting(
        'MAILER_SUBJECTS_REAUTHENTICATION',
        textOr(SUBJECTS.REAUTHENTICATION),
        SUBJECTS.REAUTHENTICATION,
        'Subject of reauthentication emails.',
      ),
      ...each(NOTIFICATION_ACTIONS, (a) =>
        setting(
          `MAILER_SUBJECTS_${upper(a)}`,
          textOr(about(a).subject),
          about(a).subject,
          `Subject of ${about(a).what} notifications.`,
        ),
      ),
    },
    templates: {
      invite: setting('MAILER_TEMPLATES_INVITE', text(), 'built-in', 'URL of the HTML template of invitation emails.'),
      confirmation: setting(
        'MAILER_TEMPLATES_CONFIRMATION',
        text(),
        'built-in',
        'URL of the HTML template of confirmation emails.',
      ),
      recovery: setting(
        'MAILER_TEMPLATES_RECOVERY',
        text(),
        'built-in',
        'URL of the HTML template of recovery emails.',
      ),
      magicLink: setting(
        'MAILER_TEMPLATES_MAGIC_LINK',
        text(),
        'built-in',
        'URL of the HTML template of magic-link emails.',
      ),
      emailChange: setting(
        'MAILER_TEMPLATES_EMAIL_CHANGE',
        text(),
        'built-in',
        'URL of the HTML template of email-change emails.',
      ),
      reauthentication: setting(
        'MAILER_TEMPLATES_REAUTHENTICATION',
        text(),
        'built-in',
        'URL of the HTML template of reauthentication emails.',
      ),
      ...each(NOTIFICATION_ACTIONS, (a) =>
        setting(
          `MAILER_TEMPLATES_${upper(a)}`,
          text(),
          'built-in',
          `URL of the HTML template of ${about(a).what} notifications.`,
        ),
      ),
    },
    notifications: each(NOTIFICATION_KINDS, (k) =>
      setting(
        `MAILER_NOTIFICATIONS_${upper(k)}_ENABLED`,
        bool(false),
        'false',
        `Email a notification ${NOTIFICATIONS[upper(k)].when}.`,
      ),
    ),
  },
};

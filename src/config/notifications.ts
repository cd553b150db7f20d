// The account-change notifications' settings (sections/mail.ts makes MAILER_NOTIFICATIONS_<KIND>_ENABLED,
// MAILER_SUBJECTS_<KIND>_NOTIFICATION and MAILER_TEMPLATES_<KIND>_NOTIFICATION of each).
import type { NotificationKind } from './kinds.ts';

// Each one's default subject, when it is sent (the _ENABLED description) and what the subject and
// template descriptions call it. Subjects are GoTrue's defaults; the passkey ones are authsvc's own
// (GoTrue has no passkey notifications).
export const NOTIFICATIONS: Record<Uppercase<NotificationKind>, { subject: string; when: string; what: string }> = {
  PASSWORD_CHANGED: {
    subject: 'Your password was changed',
    when: "to the account's address after a password change through PUT /user",
    what: 'password change',
  },
  EMAIL_CHANGED: {
    subject: 'Your email address was changed',
    when: 'to the old address once an email change is complete',
    what: 'email change',
  },
  PHONE_CHANGED: {
    subject: 'Your phone number was changed',
    when: "to the account's address once a phone change is complete",
    what: 'phone change',
  },
  IDENTITY_LINKED: {
    subject: 'A new sign-in method was linked to your account',
    when: "to the account's address when an identity is linked (OAuth linking, a new phone identity)",
    what: 'linked identity',
  },
  IDENTITY_UNLINKED: {
    subject: 'A sign-in method was removed from your account',
    when: 'to the address the account had when one of its identities is unlinked',
    what: 'unlinked identity',
  },
  MFA_FACTOR_ENROLLED: {
    subject: 'A new verification method was added to your account',
    when: "to the account's address when an MFA factor is verified for the first time",
    what: 'MFA factor enrolment',
  },
  MFA_FACTOR_UNENROLLED: {
    subject: 'A verification method was removed from your account',
    when: "to the account's address when the user unenrols an MFA factor",
    what: 'MFA factor removal',
  },
  PASSKEY_ADDED: {
    subject: 'A new passkey was added to your account',
    when: "to the account's address when the user registers a passkey (authsvc's own)",
    what: 'passkey added',
  },
  PASSKEY_REMOVED: {
    subject: 'A passkey was removed from your account',
    when: "to the account's address when the user deletes a passkey (authsvc's own)",
    what: 'passkey removed',
  },
};

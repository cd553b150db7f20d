// The send SMS hook (GoTrue: phone.go sendPhoneConfirmation, mfa.go challengePhoneFactor): with
// HOOK_SEND_SMS_ENABLED the code goes to the hook instead of the SMS provider, as
// `sms: {otp, phone, sms_type?}` (`sms_type: "mfa"` for an MFA challenge; empty keys left out).
import type { Deps } from '../deps.ts';
import { invokeHook } from './invoke.ts';
import { hookUser } from './user-payload.ts';

export interface SmsHookCall {
  userId?: string;
  otp: string;
  /** E.164 digits as stored (GoTrue passes the number as stored, without `+`). */
  phone: string;
  mfa: boolean;
}

export async function sendSmsThroughHook(deps: Deps, call: SmsHookCall, ip?: string): Promise<void> {
  const user = call.userId ? await hookUser(deps.db, call.userId) : null;
  const sms: Record<string, string> = {};
  if (call.otp) sms.otp = call.otp;
  if (call.mfa) sms.sms_type = 'mfa';
  if (call.phone) sms.phone = call.phone;
  await invokeHook(deps, 'SEND_SMS', { ...(user ? { user } : {}), sms }, { ip });
}

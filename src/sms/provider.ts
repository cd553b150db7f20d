// What the phone flows need from an SMS provider (GoTrue: sms_provider.SmsProvider). One small
// file per provider in this folder sends exactly the request GoTrue sends, through deps.fetch.
import type { SmsProviderName } from '../config/kinds.ts';

export type SmsChannel = 'sms' | 'whatsapp';

export interface SmsMessage {
  /** E.164 digits without `+` (as stored in users.phone). */
  phone: string;
  /** The rendered SMS_TEMPLATE. Twilio Verify ignores it: Twilio writes its own text. */
  message: string;
  channel: SmsChannel;
  /** The code in the message (Twilio's WhatsApp content template takes it as a variable). */
  otp: string;
}

export interface SmsProvider {
  readonly name: SmsProviderName;
  /** Whether GoTrue allows channel `whatsapp` with this provider (IsValidMessageChannel). */
  readonly supportsWhatsApp: boolean;
  /** True for twilio_verify: the provider makes and checks the code, nothing is hashed or stored. */
  readonly verifiesCodes: boolean;
  /**
   * Sends the message; resolves to the provider's message id ('' where GoTrue reads none).
   * Throws SmsSendError with the provider's own message on any refusal, bad answer, network
   * failure or abort: never with credentials in it.
   */
  send(m: SmsMessage, signal?: AbortSignal): Promise<string>;
  /** twilio_verify only: resolves when Twilio approves `code` for `phone`, else throws SmsSendError. */
  verifyCode?(phone: string, code: string, signal?: AbortSignal): Promise<void>;
}

/** A send (or Twilio Verify check) that failed; `message` is safe to show to the client. */
export class SmsSendError extends Error {
  override name = 'SmsSendError';
}

// Twilio Verify (GoTrue: sms_provider/twilio_verify.go): Twilio writes, texts and checks the
// code. Send: POST /v2/Services/{ServiceSid}/Verifications; check: …/VerificationCheck.
import { basicAuth, postForm, str, trimBase, twilioError } from './http.ts';
import type { SmsProvider } from './provider.ts';
import { SmsSendError } from './provider.ts';

export interface TwilioVerifyConfig {
  accountSid: string;
  authToken: string;
  /** The Verify service SID (VA…). */
  messageServiceSid: string;
  baseUrl: string;
}

export function createTwilioVerify(
  cfg: TwilioVerifyConfig,
  fetch: typeof globalThis.fetch,
  timeoutMs: number,
): SmsProvider {
  const service = `${trimBase(cfg.baseUrl)}/v2/Services/${encodeURIComponent(cfg.messageServiceSid)}`;
  const headers = { Authorization: basicAuth(cfg.accountSid, cfg.authToken) };
  return {
    name: 'twilio_verify',
    supportsWhatsApp: true,
    verifiesCodes: true,
    async send(m, signal) {
      const res = await postForm({
        fetch,
        url: `${service}/Verifications`,
        fields: { To: `+${m.phone}`, Channel: m.channel },
        headers,
        timeoutMs,
        signal,
        provider: 'Twilio Verify',
      });
      if (res.status !== 200 && res.status !== 201) throw twilioError(res.body);
      return str(res.body.sid);
    },
    async verifyCode(phone, code, signal) {
      const res = await postForm({
        fetch,
        url: `${service}/VerificationCheck`,
        fields: { To: `+${phone}`, Code: code },
        headers,
        timeoutMs,
        signal,
        provider: 'Twilio Verify',
      });
      if (res.status !== 200 && res.status !== 201) throw twilioError(res.body);
      if (res.body.status !== 'approved' || res.body.valid !== true) {
        throw new SmsSendError(`twilio verification error: ${str(res.body.error_message)} ${str(res.body.status)}`);
      }
    },
  };
}

// Twilio Programmable Messaging (GoTrue: sms_provider/twilio.go): POST
// /2010-04-01/Accounts/{AccountSid}/Messages.json with Basic auth; WhatsApp through the same call.
import { basicAuth, postForm, str, trimBase, twilioError } from './http.ts';
import type { SmsProvider } from './provider.ts';
import { SmsSendError } from './provider.ts';

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  /** A sender number, or a messaging service SID (MG…); both go in `From`, as GoTrue sends them. */
  messageServiceSid: string;
  /** A WhatsApp content template: the code goes in as variable "1" instead of a body. */
  contentSid?: string;
  baseUrl: string;
}

const E164_DIGITS = /^[1-9][0-9]{1,14}$/;

export function createTwilio(cfg: TwilioConfig, fetch: typeof globalThis.fetch, timeoutMs: number): SmsProvider {
  const url = `${trimBase(cfg.baseUrl)}/2010-04-01/Accounts/${encodeURIComponent(cfg.accountSid)}/Messages.json`;
  return {
    name: 'twilio',
    supportsWhatsApp: true,
    verifiesCodes: false,
    async send(m, signal) {
      let fields: Record<string, string> = {
        To: `+${m.phone}`,
        Channel: m.channel,
        From: cfg.messageServiceSid,
        Body: m.message,
      };
      if (m.channel === 'whatsapp') {
        // A number sender gets the whatsapp: prefix too; a service SID is sent as it is.
        const sender = cfg.messageServiceSid;
        const from = E164_DIGITS.test(sender.replace(/^\+/, '').replaceAll(' ', '')) ? `whatsapp:${sender}` : sender;
        fields = { To: `whatsapp:+${m.phone}`, Channel: 'whatsapp', From: from };
        if (cfg.contentSid)
          Object.assign(fields, { ContentSid: cfg.contentSid, ContentVariables: `{"1": "${m.otp}"}` });
        else fields.Body = m.message;
      }
      const res = await postForm({
        fetch,
        url,
        fields,
        timeoutMs,
        signal,
        provider: 'Twilio',
        headers: { Authorization: basicAuth(cfg.accountSid, cfg.authToken) },
      });
      if (res.status !== 200 && res.status !== 201) throw twilioError(res.body);
      const status = str(res.body.status);
      if (status === 'failed' || status === 'undelivered') {
        throw new SmsSendError(
          `twilio error: ${str(res.body.error_message)} ${str(res.body.error_code)} for message ${str(res.body.sid)}`,
        );
      }
      return str(res.body.sid);
    },
  };
}

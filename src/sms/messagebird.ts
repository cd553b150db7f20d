// MessageBird (GoTrue: sms_provider/messagebird.go): POST /messages, `Authorization: AccessKey`.
import { postForm, str, trimBase } from './http.ts';
import type { SmsProvider } from './provider.ts';
import { SmsSendError } from './provider.ts';

export interface MessagebirdConfig {
  accessKey: string;
  originator: string;
  baseUrl: string;
}

// Only these statuses carry MessageBird's error list; any other answer, 5xx included, is read as
// a message (GoTrue does the same), so a 5xx without recipients fails on the sent count.
const ERROR_STATUSES = new Set([400, 401, 403, 422]);

export function createMessagebird(
  cfg: MessagebirdConfig,
  fetch: typeof globalThis.fetch,
  timeoutMs: number,
): SmsProvider {
  return {
    name: 'messagebird',
    supportsWhatsApp: false,
    verifiesCodes: false,
    async send(m, signal) {
      if (m.channel !== 'sms') throw new SmsSendError(`channel type "${m.channel}" is not supported for Messagebird`);
      const res = await postForm({
        fetch,
        url: `${trimBase(cfg.baseUrl)}/messages`,
        timeoutMs,
        signal,
        provider: 'MessageBird',
        fields: {
          originator: cfg.originator,
          body: m.message,
          recipients: m.phone,
          type: 'sms',
          datacoding: 'unicode',
        },
        headers: { Authorization: `AccessKey ${cfg.accessKey}` },
      });
      if (ERROR_STATUSES.has(res.status)) {
        const errors = Array.isArray(res.body.errors) ? (res.body.errors as Array<Record<string, unknown>>) : [];
        throw new SmsSendError(str(errors[0]?.description) || `messagebird error: HTTP ${res.status}`);
      }
      const recipients = res.body.recipients as Record<string, unknown> | undefined;
      if (!recipients || recipients.totalSentCount === 0 || recipients.totalSentCount === undefined) {
        throw new SmsSendError('messagebird error: total sent count is 0');
      }
      return str(res.body.id);
    },
  };
}

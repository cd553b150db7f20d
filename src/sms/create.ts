// SMS_PROVIDER's client, built once by the adapter (GoTrue: sms_provider.GetSmsProvider). Start-up
// has already refused a chosen provider with a missing credential (config.ts).
import type { Config } from '../config/types.ts';
import { createMessagebird } from './messagebird.ts';
import type { SmsProvider } from './provider.ts';
import { createTextlocal } from './textlocal.ts';
import { createTwilioVerify } from './twilio-verify.ts';
import { createTwilio } from './twilio.ts';
import { createVonage } from './vonage.ts';

export function createSmsProvider(sms: Config['sms'], fetch: typeof globalThis.fetch): SmsProvider | undefined {
  const ms = sms.httpTimeout * 1000;
  switch (sms.provider) {
    case undefined:
      return undefined;
    case 'twilio': {
      const t = sms.twilio;
      return createTwilio(
        {
          accountSid: t.accountSid ?? '',
          authToken: t.authToken ?? '',
          messageServiceSid: t.messageServiceSid ?? '',
          contentSid: t.contentSid,
          baseUrl: t.baseUrl,
        },
        fetch,
        ms,
      );
    }
    case 'twilio_verify': {
      const t = sms.twilioVerify;
      return createTwilioVerify(
        {
          accountSid: t.accountSid ?? '',
          authToken: t.authToken ?? '',
          messageServiceSid: t.messageServiceSid ?? '',
          baseUrl: t.baseUrl,
        },
        fetch,
        ms,
      );
    }
    case 'messagebird':
      return createMessagebird(
        {
          accessKey: sms.messagebird.accessKey ?? '',
          originator: sms.messagebird.originator ?? '',
          baseUrl: sms.messagebird.baseUrl,
        },
        fetch,
        ms,
      );
    case 'textlocal':
      return createTextlocal(
        { apiKey: sms.textlocal.apiKey ?? '', sender: sms.textlocal.sender ?? '', baseUrl: sms.textlocal.baseUrl },
        fetch,
        ms,
      );
    case 'vonage':
      return createVonage(
        {
          apiKey: sms.vonage.apiKey ?? '',
          apiSecret: sms.vonage.apiSecret ?? '',
          from: sms.vonage.from ?? '',
          baseUrl: sms.vonage.baseUrl,
        },
        fetch,
        ms,
      );
  }
}

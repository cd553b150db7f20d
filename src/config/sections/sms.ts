// SMS: codes, test numbers and the providers' credentials (SMS_*).
import { bool, opt, text, textOr, withDefault, setting } from '../setting.ts';
import { SMS_PROVIDERS } from '../kinds.ts';
import { oneOf, otpLength, parseRfc3339, parseTestOtp, parseUrl, secondsOr, wholeSecondsOr } from '../values.ts';

export const sms = {
  sms: {
    // Account-change notifications (GoTrue's MAILER_NOTIFICATIONS_*): off by default; a failed send is only logged.
    autoconfirm: setting('SMS_AUTOCONFIRM', bool(false), 'false', 'When true, phone numbers need no confirmation.'),
    maxFrequency: setting(
      'SMS_MAX_FREQUENCY',
      withDefault(secondsOr(60), 60),
      '60',
      'Minimum seconds between SMS OTPs to one user.',
    ),
    otpExp: setting('SMS_OTP_EXP', withDefault(wholeSecondsOr(60), 60), '60', 'Validity of an SMS OTP in seconds.'),
    otpLength: setting(
      'SMS_OTP_LENGTH',
      withDefault(otpLength, 6),
      '6',
      'Digits of an SMS OTP, 6 to 10 (other values count as 6).',
    ),
    provider: setting('SMS_PROVIDER', opt(oneOf(SMS_PROVIDERS)), '', `One of ${SMS_PROVIDERS.join(', ')}.`),
    template: setting(
      'SMS_TEMPLATE',
      textOr('Your code is {{ .Code }}'),
      'Your code is {{ .Code }}',
      'Text of the SMS.',
    ),
    testOtp: setting(
      'SMS_TEST_OTP',
      withDefault(parseTestOtp, {}),
      '',
      'Fixed codes for test numbers: phone:otp,phone:otp (no SMS is sent).',
      { secret: true },
    ),
    testOtpValidUntil: setting(
      'SMS_TEST_OTP_VALID_UNTIL',
      opt(parseRfc3339),
      '',
      'RFC 3339 time from which SMS_TEST_OTP stops working; empty means never.',
    ),
    httpTimeout: setting(
      'INTERNAL_HTTP_TIMEOUT',
      withDefault(secondsOr(10), 10),
      '10',
      "Timeout of each request to an SMS or OAuth provider, in seconds or Go syntax (GoTrue's GOTRUE_INTERNAL_HTTP_TIMEOUT).",
    ),
    twilio: {
      accountSid: setting('SMS_TWILIO_ACCOUNT_SID', text(), '', 'Twilio account SID.'),
      authToken: setting('SMS_TWILIO_AUTH_TOKEN', text(), '', 'Twilio auth token.', { secret: true }),
      messageServiceSid: setting(
        'SMS_TWILIO_MESSAGE_SERVICE_SID',
        text(),
        '',
        'Twilio message service SID or sender number.',
      ),
      contentSid: setting(
        'SMS_TWILIO_CONTENT_SID',
        text(),
        '',
        'Twilio content template SID for WhatsApp codes (the code is variable 1).',
      ),
      baseUrl: setting(
        'SMS_TWILIO_BASE_URL',
        withDefault(parseUrl, 'https://api.twilio.com'),
        'https://api.twilio.com',
        'Twilio API base URL (an edge location, or a proxy); authsvc only.',
      ),
    },
    twilioVerify: {
      accountSid: setting('SMS_TWILIO_VERIFY_ACCOUNT_SID', text(), '', 'Twilio Verify account SID.'),
      authToken: setting('SMS_TWILIO_VERIFY_AUTH_TOKEN', text(), '', 'Twilio Verify auth token.', { secret: true }),
      messageServiceSid: setting('SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID', text(), '', 'Twilio Verify service SID.'),
      baseUrl: setting(
        'SMS_TWILIO_VERIFY_BASE_URL',
        withDefault(parseUrl, 'https://verify.twilio.com'),
        'https://verify.twilio.com',
        'Twilio Verify API base URL; authsvc only.',
      ),
    },
    messagebird: {
      accessKey: setting('SMS_MESSAGEBIRD_ACCESS_KEY', text(), '', 'MessageBird access key.', { secret: true }),
      originator: setting(
        'SMS_MESSAGEBIRD_ORIGINATOR',
        text(),
        '',
        'MessageBird originator: a phone number with + or a company name.',
      ),
      baseUrl: setting(
        'SMS_MESSAGEBIRD_BASE_URL',
        withDefault(parseUrl, 'https://rest.messagebird.com'),
        'https://rest.messagebird.com',
        'MessageBird API base URL; authsvc only.',
      ),
    },
    textlocal: {
      apiKey: setting('SMS_TEXTLOCAL_API_KEY', text(), '', 'Textlocal API key.', { secret: true }),
      sender: setting('SMS_TEXTLOCAL_SENDER', text(), '', 'Textlocal sender.'),
      baseUrl: setting(
        'SMS_TEXTLOCAL_BASE_URL',
        withDefault(parseUrl, 'https://api.textlocal.in'),
        'https://api.textlocal.in',
        "Textlocal API base URL (GoTrue's India host; UK accounts use https://api.txtlocal.com); authsvc only.",
      ),
    },
    vonage: {
      apiKey: setting('SMS_VONAGE_API_KEY', text(), '', 'Vonage API key.', { secret: true }),
      apiSecret: setting('SMS_VONAGE_API_SECRET', text(), '', 'Vonage API secret.', { secret: true }),
      from: setting('SMS_VONAGE_FROM', text(), '', 'Vonage sender.'),
      baseUrl: setting(
        'SMS_VONAGE_BASE_URL',
        withDefault(parseUrl, 'https://rest.nexmo.com'),
        'https://rest.nexmo.com',
        'Vonage SMS API base URL; authsvc only.',
      ),
    },
  },
};

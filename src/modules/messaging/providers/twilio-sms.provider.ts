import twilio from 'twilio';
import type { AppConfig } from '../../../core/config/config';
import {
  CallProvider,
  OutboundCall,
  OutboundSms,
  PermanentSendError,
  SmsProvider,
  SmsSendResult,
} from './sms-provider.port';
import { TWILIO_API, TwilioHttpClient } from './twilio-http-client';

/** Twilio's errors that retrying cannot fix: a bad or unreachable number, a blocked recipient. */
const PERMANENT_CODES = new Set([21211, 21408, 21610, 21612, 21614, 30003, 30005, 30006]);

/**
 * With these set (a proxy, a CA bundle), Twilio's own API is reached through the package's
 * own HTTP client, which honours them and TwilioHttpClient does not. A rebased API
 * (TWILIO_API_BASE_URL) is reached directly, as that client reached an http:// one.
 */
const PACKAGE_CLIENT_ENV = ['HTTP_PROXY', 'TWILIO_CA_BUNDLE'];

/**
 * SMS_PROVIDER=twilio: Messages API to send, X-Twilio-Signature on webhooks. The twilio
 * package's own client builds and reads every request; it sends them through
 * TwilioHttpClient (undici), rebased on TWILIO_API_BASE_URL when that is not Twilio's
 * (a Twilio-compatible API; the tests' local peer).
 */
export class TwilioSmsProvider implements SmsProvider, CallProvider {
  readonly name = 'twilio' as const;
  private readonly client: twilio.Twilio;
  private readonly authToken: string;
  private readonly http: TwilioHttpClient | undefined;

  constructor(config: AppConfig) {
    this.authToken = config.twilioAuthToken!;
    const baseUrl = config.twilioApiBaseUrl.replace(/\/+$/, '');
    const packageClient =
      baseUrl === TWILIO_API && PACKAGE_CLIENT_ENV.some((name) => process.env[name] !== undefined);
    this.http = packageClient
      ? undefined
      : new TwilioHttpClient(baseUrl, baseUrl === TWILIO_API ? 30_000 : 15_000);
    this.client = twilio(config.twilioAccountSid, this.authToken, { httpClient: this.http });
  }

  /** Lets requests under way finish, then closes the connections. */
  async onModuleDestroy(): Promise<void> {
    await this.http?.close();
  }

  async send(sms: OutboundSms): Promise<SmsSendResult> {
    try {
      const message = await this.client.messages.create({
        to: sms.to,
        from: sms.from,
        body: sms.body,
        statusCallback: sms.statusCallback,
      });
      const status =
        message.status === 'delivered' ? 'delivered' : message.status === 'failed' ? 'failed' : 'sent';
      return {
        providerMessageId: message.sid,
        status,
        ...(message.errorCode ? { errorCode: String(message.errorCode) } : {}),
      };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'number' && PERMANENT_CODES.has(code)) throw new PermanentSendError(String(code));
      throw err;
    }
  }

  /** Calls API: the call is recorded, its status and recording posted back to the chat's URLs. */
  async placeCall(call: OutboundCall): Promise<{ callSid: string }> {
    const created = await this.client.calls.create({
      to: call.to,
      from: call.from,
      twiml: '<Response><Pause length="1"/></Response>',
      record: true,
      statusCallback: call.statusCallback,
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      recordingStatusCallback: call.recordingStatusCallback,
    });
    return { callSid: created.sid };
  }

  verifyWebhook(url: string, params: Record<string, string>, signature: string | undefined): boolean {
    if (!signature) return false;
    try {
      return twilio.validateRequest(this.authToken, signature, url, { ...params });
    } catch {
      // The package compares buffers of unequal length by throwing: a signature of another length.
      return false;
    }
  }
}

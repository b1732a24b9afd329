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

const TWILIO_API = 'https://api.twilio.com';

/**
 * The twilio package's own client, with its HTTP client's target moved to
 * TWILIO_API_BASE_URL (a Twilio-compatible API; the tests' local peer): requests keep the
 * package's paths, form encoding and Basic authentication.
 */
class RebasedRequestClient extends twilio.RequestClient {
  constructor(private readonly baseUrl: string) {
    super({ timeout: 15_000 });
  }

  override request<TData>(opts: Parameters<twilio.RequestClient['request']>[0] & { data?: TData }) {
    const uri = opts.uri.startsWith(TWILIO_API) ? this.baseUrl + opts.uri.slice(TWILIO_API.length) : opts.uri;
    return super.request<TData>({ ...opts, uri });
  }
}

/** Twilio's errors that retrying cannot fix: a bad or unreachable number, a blocked recipient. */
const PERMANENT_CODES = new Set([21211, 21408, 21610, 21612, 21614, 30003, 30005, 30006]);

/** SMS_PROVIDER=twilio: Messages API to send, X-Twilio-Signature on webhooks. */
export class TwilioSmsProvider implements SmsProvider, CallProvider {
  readonly name = 'twilio' as const;
  private readonly client: twilio.Twilio;
  private readonly authToken: string;

  constructor(config: AppConfig) {
    this.authToken = config.twilioAuthToken!;
    const baseUrl = config.twilioApiBaseUrl.replace(/\/+$/, '');
    this.client = twilio(config.twilioAccountSid, this.authToken, {
      httpClient: baseUrl === TWILIO_API ? undefined : new RebasedRequestClient(baseUrl),
    });
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

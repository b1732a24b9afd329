import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { OutboundSms, SmsProvider, SmsSendResult } from './sms-provider.port';

/**
 * SMS_PROVIDER=log, the default: nothing leaves the machine. Each message is logged by
 * its id and length, never its content or number (both may be health information), and
 * reported delivered at once, so `npm start` works with no account anywhere.
 */
export class LogSmsProvider implements SmsProvider {
  readonly name = 'log' as const;
  private readonly logger = new Logger('LogSmsProvider');

  send(sms: OutboundSms): Promise<SmsSendResult> {
    const providerMessageId = `LOG${randomUUID().replace(/-/g, '')}`;
    this.logger.log({ msg: 'sms delivered (log provider)', providerMessageId, length: sms.body.length });
    return Promise.resolve({ providerMessageId, status: 'delivered' });
  }

  /** Nobody can sign for the log provider: its webhooks are refused. */
  /** Places nothing: a development call id, so the chat records its call. */
  async placeCall(): Promise<{ callSid: string }> {
    return { callSid: `CAlog${randomUUID().replace(/-/g, '')}` };
  }

  verifyWebhook(): boolean {
    return false;
  }
}

import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { AppConfig } from '../../../core/config/config';

export interface OutboundEmail {
  to: string;
  from: string;
  subject: string;
  text: string;
}

/** Outgoing mail: SMTP through nodemailer (SMTP_URL), or logged and reported delivered when unset. */
export interface EmailSender {
  send(mail: OutboundEmail): Promise<{ providerMessageId: string }>;
  close(): void;
}

export const EMAIL_SENDER = Symbol('EMAIL_SENDER');

export function createEmailSender(config: AppConfig): EmailSender {
  if (!config.smtpUrl) {
    const logger = new Logger('LogEmailSender');
    return {
      send(mail) {
        const providerMessageId = `<${randomUUID()}@log.invalid>`;
        // Ids and sizes only: a mail's content and addresses may be health information.
        logger.log({ msg: 'email delivered (no SMTP_URL)', providerMessageId, length: mail.text.length });
        return Promise.resolve({ providerMessageId });
      },
      close: () => undefined,
    };
  }
  const transport = nodemailer.createTransport(config.smtpUrl);
  return {
    async send(mail) {
      const info = await transport.sendMail(mail);
      return { providerMessageId: info.messageId };
    },
    close: () => transport.close(),
  };
}

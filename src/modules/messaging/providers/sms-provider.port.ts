/**
 * The SMS provider port (issue 11, item 8): chosen by SMS_PROVIDER. The worker gives it
 * one delivery; it answers with the provider's id for it and what it knows so far.
 */
export interface OutboundSms {
  to: string;
  from: string;
  body: string;
  /** Where the provider reports later status changes (signed). */
  statusCallback: string;
}

export interface SmsSendResult {
  providerMessageId: string;
  /** `sent` while the provider has not said more; some providers answer at once. */
  status: 'sent' | 'delivered' | 'failed';
  errorCode?: string;
}

export interface SmsProvider {
  readonly name: 'log' | 'twilio';
  send(sms: OutboundSms): Promise<SmsSendResult>;
  /**
   * Whether a webhook request really comes from the provider: the full URL it was sent
   * to, its form fields, and its signature header.
   */
  verifyWebhook(url: string, params: Record<string, string>, signature: string | undefined): boolean;
}

export interface OutboundCall {
  to: string;
  from: string;
  /** Where the provider posts the call's status, and its recording's. */
  statusCallback: string;
  recordingStatusCallback: string;
}

/** Providers that also place voice calls (the same account speaks SMS and voice). */
export interface CallProvider {
  placeCall(call: OutboundCall): Promise<{ callSid: string }>;
}

export const SMS_PROVIDER = Symbol('SMS_PROVIDER');

/** A provider's answer that will not change by retrying (bad number, blocked): failed, not retried. */
export class PermanentSendError extends Error {
  constructor(readonly code: string) {
    super(`The provider refused the message permanently (${code})`);
    this.name = 'PermanentSendError';
  }
}

/** What a provider's status word means for a delivery (forward only: only outcomes count). */
export function outcomeOfStatus(status: string): 'delivered' | 'failed' | undefined {
  switch (status.toLowerCase()) {
    case 'delivered':
    case 'read':
      return 'delivered';
    case 'failed':
    case 'undelivered':
    case 'canceled':
      return 'failed';
    default:
      return undefined;
  }
}

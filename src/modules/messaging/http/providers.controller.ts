import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { Public } from '../../../core/auth/auth.decorators';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { AcceptBody } from '../../../core/http/body-parsing';
import { SkipReadYourWrites } from '../../../core/cqrs/read-your-writes';
import { BodyCleanedByRoute } from '../../../core/http/input-guard';
import { storableText } from '../../../core/text/storable-text';
import { SkipRateLimit } from '../../../core/rate-limit/rate-limiter';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { InboundMessages, smsOutcomeCommand } from '../commands/inbound.service';
import { VoiceCalls } from '../commands/voice.service';
import { SMS_PROVIDER, SmsProvider } from '../providers/sms-provider.port';
import { DeliveryService } from '../workers/delivery.service';

const FORM = 'application/x-www-form-urlencoded';
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const API_PREFIX = '/api/v2';

type Form = Record<string, string>;

function field(form: Form, name: string): string {
  const value = form[name];
  if (typeof value !== 'string' || !value) throw new ValidationError(`${name}: required`);
  return value;
}

/**
 * What providers post to the service. Public (a provider holds no bearer token), each
 * authenticated its own way: Twilio's requests by X-Twilio-Signature over the URL it
 * called and its form fields, checked with the twilio package (403 otherwise); the mail
 * gateway's by the shared secret INBOUND_EMAIL_SECRET in X-Inbound-Email-Secret.
 */
@ApiExcludeController()
// Not limited per client address like other public routes: a provider's webhooks all come
// from its few addresses, and Twilio retries neither status callbacks nor inbound texts,
// so a 429 would lose a delivery status or a STOP. Each request is authenticated instead.
@SkipRateLimit()
@Controller('providers')
export class ProvidersController {
  constructor(
    private readonly inbound: InboundMessages,
    private readonly voice: VoiceCalls,
    private readonly deliveries: DeliveryService,
    @Inject(SMS_PROVIDER) private readonly sms: SmsProvider,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The URL the provider called, as it saw it: the public base address, then the path and query. */
  private verifyTwilio(req: FastifyRequest, form: Form): void {
    const path = req.url.startsWith(API_PREFIX) ? req.url.slice(API_PREFIX.length) : req.url;
    const url = `${this.config.publicBaseUrl.replace(/\/+$/, '')}${path}`;
    const signature = req.headers['x-twilio-signature'];
    if (!this.sms.verifyWebhook(url, form, typeof signature === 'string' ? signature : undefined))
      throw new ForbiddenError('X-Twilio-Signature: missing or not valid for this request');
  }

  // Twilio reads nothing back after our answer, and the assistant's reply job reads the
  // chat's stream, not its read model: the answer need not wait for the projections.
  @Post('twilio/sms/inbound')
  @Public()
  @AcceptBody(FORM)
  // Twilio does not retry a 4xx: a text holding a NUL is kept (NUL as U+FFFD), not refused.
  @BodyCleanedByRoute()
  @HttpCode(200)
  @SkipReadYourWrites()
  async twilioInbound(
    @Req() req: FastifyRequest,
    @Body() form: Form,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    this.verifyTwilio(req, form ?? {});
    // The signature covers the fields as sent; only then are they made storable.
    await this.inbound.sms({
      from: storableText(field(form, 'From')),
      to: storableText(field(form, 'To')),
      body: typeof form.Body === 'string' ? storableText(form.Body) : '',
      providerMessageId: storableText(field(form, 'MessageSid')),
    });
    // Replies (STOP's confirmation, HELP) go out as tracked messages, not in this answer.
    // The type is set only here: an error before this point is answered as JSON {detail}.
    reply.type('text/xml; charset=utf-8');
    return EMPTY_TWIML;
  }

  @Post('twilio/sms/status')
  @Public()
  @AcceptBody(FORM)
  @HttpCode(204)
  async twilioStatus(@Req() req: FastifyRequest, @Body() form: Form): Promise<void> {
    this.verifyTwilio(req, form ?? {});
    const query = req.query as Record<string, string | undefined>;
    const id = (name: string): number => {
      const raw = query[name] ?? '';
      if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
        throw new NotFoundError('Delivery not found');
      return Number(raw);
    };
    const [chatId, messageId, memberId] = [id('chatId'), id('messageId'), id('memberId')];
    const callback = {
      chatId,
      messageId,
      memberId,
      providerMessageId: field(form, 'MessageSid'),
      status: field(form, 'MessageStatus'),
      errorCode: form.ErrorCode,
    };
    // A callback sent as the provider answers waits for this process's record of that
    // answer, and is recorded with it when it came before that record's append.
    if (await this.deliveries.recordWithDispatch({ ...callback, outcome: smsOutcomeCommand(callback) }))
      return;
    await this.inbound.smsStatus(callback);
  }

  /** Voice status callbacks (the call's URL names its chat): CallStarted, CallCompleted. */
  @Post('twilio/voice/status')
  @Public()
  @AcceptBody(FORM)
  @HttpCode(204)
  async twilioVoiceStatus(@Req() req: FastifyRequest, @Body() form: Form): Promise<void> {
    this.verifyTwilio(req, form ?? {});
    const duration = Number(form.CallDuration ?? form.Duration ?? '0');
    await this.voice.status({
      chatId: chatIdOf(req),
      callSid: field(form, 'CallSid'),
      status: field(form, 'CallStatus'),
      duration: Number.isFinite(duration) && duration >= 0 ? Math.floor(duration) : 0,
    });
  }

  /** A recording is ready at the provider: a `voice` job fetches and stores it. */
  @Post('twilio/voice/recording')
  @Public()
  @AcceptBody(FORM)
  // A transcript holding a NUL is kept (as U+FFFD): Twilio does not retry a 4xx.
  @BodyCleanedByRoute()
  @HttpCode(204)
  async twilioVoiceRecording(@Req() req: FastifyRequest, @Body() form: Form): Promise<void> {
    this.verifyTwilio(req, form ?? {});
    // The transcription callback (TranscriptionText) comes to the same address.
    if (form.TranscriptionText !== undefined) {
      if (form.TranscriptionStatus !== undefined && form.TranscriptionStatus !== 'completed') return;
      const text = storableText(String(form.TranscriptionText)).trim();
      if (!text) return;
      await this.voice.transcript({
        chatId: chatIdOf(req),
        transcriptionSid: storableText(field(form, 'TranscriptionSid')),
        // Cut without ending on half a surrogate pair (jsonb refuses one: a 500, the transcript lost).
        text: storableText(text, { max: 10_000 }),
      });
      return;
    }
    const status = form.RecordingStatus;
    if (status !== undefined && status !== 'completed') return;
    const url = storableText(field(form, 'RecordingUrl'));
    if (!/^https?:\/\//.test(url)) throw new ValidationError('RecordingUrl: must be an http(s) URL');
    await this.voice.recording({
      chatId: chatIdOf(req),
      callSid: storableText(field(form, 'CallSid')),
      recordingSid: storableText(field(form, 'RecordingSid')),
      recordingUrl: url,
    });
  }

  @Post('email/inbound')
  @Public()
  @AcceptBody('message/rfc822', 'text/plain')
  @HttpCode(200)
  async emailInbound(@Req() req: FastifyRequest, @Body() raw: Buffer): Promise<{ recorded: boolean }> {
    const secret = this.config.inboundEmailSecret;
    const given = req.headers['x-inbound-email-secret'];
    if (!secret || typeof given !== 'string' || !sameSecret(given, secret))
      throw new ForbiddenError('X-Inbound-Email-Secret: missing or wrong');
    if (!Buffer.isBuffer(raw) || raw.length === 0)
      throw new ValidationError('body: send the raw MIME message');
    return { recorded: await this.inbound.email(raw) };
  }
}

function chatIdOf(req: FastifyRequest): number {
  const raw = (req.query as Record<string, string | undefined>).chatId ?? '';
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new NotFoundError('Chat not found');
  return Number(raw);
}

/** Compared as digests, so neither the length nor a prefix of the secret leaks through timing. */
function sameSecret(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

import { PublicEventCatalogue } from '../../../core/events/public-events';
import type { MessageReceived } from './chat.events';
import { MESSAGING_PUBLIC_EVENTS } from './messaging.public-events';

const received = (source: MessageReceived['data']['source']): MessageReceived => ({
  type: 'MessageReceived',
  data: {
    chatId: 7,
    workspaceId: 'w',
    messageId: 9,
    memberId: 5,
    content: 'hello',
    source,
    providerMessageId: 'x',
    subject: source === 'email' ? 'Hi' : null,
    receivedAt: '2026-11-23T10:00:00.000Z',
  },
});

describe('messaging public events', () => {
  const catalogue = new PublicEventCatalogue(MESSAGING_PUBLIC_EVENTS);

  it('makes an inbound SMS message:received with chatId, message {content} and memberId', () => {
    const event = received('sms');
    expect(catalogue.fromEvent(event).map((d) => d.name)).toEqual([
      'chat.message.created',
      'message:received',
    ]);
    expect(catalogue.get('message:received')!.payload(event)).toEqual({
      chatId: 7,
      message: { id: 9, content: 'hello' },
      memberId: 5,
    });
  });

  it('makes inbound mail email.received, and an API message only chat.message.created', () => {
    expect(catalogue.fromEvent(received('email')).map((d) => d.name)).toEqual([
      'chat.message.created',
      'email.received',
    ]);
    expect(catalogue.get('email.received')!.payload(received('email'))).toMatchObject({
      message: { subject: 'Hi' },
    });
    expect(catalogue.fromEvent(received('api')).map((d) => d.name)).toEqual(['chat.message.created']);
  });

  it('makes CallStarted call:started and CallCompleted call:completed, with duration and outcome', () => {
    const completed = {
      type: 'CallCompleted' as const,
      data: {
        chatId: 7,
        workspaceId: 'w',
        callSid: 'CA1',
        durationSeconds: 42,
        outcome: 'no-answer' as const,
        completedAt: '2026-11-23T10:01:00.000Z',
      },
    };
    expect(catalogue.fromEvent(completed).map((d) => d.name)).toEqual(['call:completed']);
    expect(catalogue.get('call:completed')!.payload(completed)).toEqual({
      call: {
        chatId: 7,
        callSid: 'CA1',
        status: 'no-answer',
        startedAt: null,
        completedAt: '2026-11-23T10:01:00.000Z',
        durationSeconds: 42,
        outcome: 'no-answer',
      },
    });
    const started = {
      type: 'CallStarted' as const,
      data: { chatId: 7, workspaceId: 'w', callSid: 'CA1', startedAt: '2026-11-23T10:00:00.000Z' },
    };
    expect(catalogue.get('call:started')!.payload(started)).toMatchObject({
      call: { chatId: 7, status: 'in-progress', startedAt: '2026-11-23T10:00:00.000Z' },
    });
  });
});

import { CommandBus } from '@nestjs/cqrs';
import { WrongExpectedRevisionError } from '../../src/core/event-store/event-store.port';
import { ValidationError } from '../../src/core/http/domain-errors';
import { SendAssistantMessageCommand } from '../../src/modules/messaging';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';

/**
 * SendAssistantMessageCommand with `asRead` (the assistant's reply job): it decides on the
 * chat's stream as the caller read it and appends only if the stream has not moved since,
 * so a chat changed after the caller's checks gets nothing and the caller reads again.
 */
describe('Messaging: an assistant message sent on the chat as read (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  const system = { scopes: ['chats:write'], memberId: undefined };

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Clinic'));
  });
  afterAll(() => t.close());

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const sent = async (chatId: number) =>
    (await t.store.readStream(`chat-${chatId}`)).filter((e) => e.type === 'MessageSent');
  async function newChat(): Promise<number> {
    const m = await signup(t, wid, key, { name: 'Ada Lovelace', email: `ada${Date.now()}@example.com` });
    const c = await post('/chats', { channel: 'web-chat', memberId: m.member.id });
    expect(c.status).toBe(201);
    return c.body.id as number;
  }

  it('sends on the stream as read without reading it again, and writes nothing once the stream moved', async () => {
    const commands = t.app.get(CommandBus);
    const chatId = await newChat();
    const asRead = await t.store.readStream(`chat-${chatId}`);
    // The member writes after the caller's read: the send on that read must not land.
    expect((await post(`/chats/${chatId}/messages`, { content: 'One more thing' })).status).toBe(201);
    await expect(
      commands.execute(new SendAssistantMessageCommand(wid, chatId, 'Stale answer', system, asRead)),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect(await sent(chatId)).toHaveLength(0);

    const fresh = await t.store.readStream(`chat-${chatId}`);
    const messageId = await commands.execute<SendAssistantMessageCommand, number>(
      new SendAssistantMessageCommand(wid, chatId, 'Fresh answer', system, fresh),
    );
    const [message] = await sent(chatId);
    expect(message).toMatchObject({
      revision: fresh.at(-1)!.revision + 1n,
      data: { messageId, role: 'assistant', content: 'Fresh answer' },
    });
  });

  it("refuses another chat's stream, and a chat of another workspace is not found", async () => {
    const commands = t.app.get(CommandBus);
    const chatId = await newChat();
    const other = await newChat();
    const otherRead = await t.store.readStream(`chat-${other}`);
    await expect(
      commands.execute(new SendAssistantMessageCommand(wid, chatId, 'Hello', system, otherRead)),
    ).rejects.toBeInstanceOf(ValidationError);
    const elsewhere = await t.bootstrap('Elsewhere');
    await expect(
      commands.execute(
        new SendAssistantMessageCommand(elsewhere.workspaceId, other, 'Hello', system, otherRead),
      ),
    ).rejects.toMatchObject({ status: 404 });
    expect(await sent(chatId)).toHaveLength(0);
    expect(await sent(other)).toHaveLength(0);
  });
});

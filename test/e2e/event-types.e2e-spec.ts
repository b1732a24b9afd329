import { startTestApp, TestApp } from '../support/app';

describe('GET /event-types (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists the public events, without a credential and without naming internal events', async () => {
    const res = await t.request('GET', '/event-types');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      eventTypes: [
        {
          eventType: 'data_record:created',
          description: 'new data record',
          feature: 'records',
          payloadFields: ['dataRecord', 'dataType', 'member'],
        },
        {
          eventType: 'data_record:updated',
          description: 'data record updated',
          feature: 'records',
          payloadFields: ['dataRecord', 'dataType', 'member', 'changedFields', 'previousValues'],
        },
        {
          eventType: 'data_record:changed',
          description: 'created or updated; payload includes an operation field',
          feature: 'records',
          payloadFields: ['operation', 'dataRecord', 'dataType', 'member'],
        },
        {
          eventType: 'member:updated',
          description: 'member information updated',
          feature: 'identity',
          payloadFields: ['member'],
        },
        {
          eventType: 'chat:created',
          description: 'new chat started',
          feature: 'messaging',
          payloadFields: ['chat'],
        },
        {
          eventType: 'chat.message.created',
          description: 'a message was written into a chat (inbound or outbound)',
          feature: 'messaging',
          payloadFields: ['chat', 'message'],
        },
        {
          eventType: 'message:received',
          description: 'a member texted the workspace (inbound SMS)',
          feature: 'messaging',
          payloadFields: ['chatId', 'message', 'memberId'],
        },
        {
          eventType: 'email.received',
          description: "an email arrived at one of the workspace's inboxes",
          feature: 'messaging',
          payloadFields: ['chatId', 'message', 'memberId'],
        },
        {
          eventType: 'chat:summary',
          description:
            'chat summary available, any channel (when it goes idle, is paused, or its assignment completes)',
          feature: 'summaries',
          payloadFields: ['chat', 'workflow', 'summary'],
        },
        {
          eventType: 'call:started',
          description: 'voice call started',
          feature: 'messaging',
          payloadFields: ['call'],
        },
        {
          eventType: 'call:completed',
          description: 'voice call ended',
          feature: 'messaging',
          payloadFields: ['call'],
        },
        {
          eventType: 'call:summary',
          description: 'phone call summary available (after call:completed)',
          feature: 'summaries',
          payloadFields: ['chat', 'workflow', 'summary', 'call'],
        },
        {
          eventType: 'task.created',
          description: 'new task created',
          feature: 'work',
          payloadFields: ['task'],
        },
        {
          eventType: 'task.updated',
          description: 'task updated (name, description, status, priority, due date or assignees)',
          feature: 'work',
          payloadFields: ['task'],
        },
        {
          eventType: 'record.deleted',
          description: 'data record deleted',
          feature: 'records',
          payloadFields: ['dataRecord'],
        },
        {
          eventType: 'workflow.completed',
          description: "a workflow's assignment for a member completed",
          feature: 'work',
          payloadFields: ['assignment', 'workflow'],
        },
        {
          eventType: 'workflow.failed',
          description: "a workflow's assignment for a member failed",
          feature: 'work',
          payloadFields: ['assignment', 'workflow'],
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toMatch(
      /MemberUpdated|DataRecord|Claim|Task(Created|Updated)|Assignment|ChatCreated|MessageSent|MessageReceived/,
    );
  });
});

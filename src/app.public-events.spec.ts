import { FEATURES } from './app.module';
import { definePublicEvent, PublicEventCatalogue } from './core/events/public-events';
import { featureOf } from './core/features/feature';
import type { MemberSnapshot, MemberUpdated } from './modules/identity/domain/member.events';

const catalogue = new PublicEventCatalogue(FEATURES.flatMap((f) => featureOf(f).publicEvents ?? []));

const member: MemberSnapshot = {
  id: 12,
  workspaceId: '0190a6c4-0000-7000-8000-000000000001',
  accountUuid: null,
  email: 'ann@example.com',
  phone: null,
  name: 'Ann',
  externalId: null,
  memberRoleId: 3,
  kind: 'person',
  status: 'active',
  notifySms: false,
  notifyEmail: true,
  notifyVoice: false,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T11:00:00.000Z',
};

describe('the catalogue of public events', () => {
  it('lists member:updated, emitted by identity from MemberUpdated', () => {
    expect(catalogue.list().map((d) => d.name)).toEqual([
      'member:updated',
      'task.created',
      'task.updated',
      'workflow.completed',
      'workflow.failed',
    ]);
    const def = catalogue.get('member:updated')!;
    expect(def).toMatchObject({ feature: 'identity', sources: ['MemberUpdated'], payloadFields: ['member'] });
    expect(catalogue.fromSource('MemberUpdated')).toEqual([def]);
  });

  it('carries the member as it now stands', () => {
    const event: MemberUpdated = {
      type: 'MemberUpdated',
      data: {
        memberId: 12,
        workspaceId: member.workspaceId,
        changes: { name: 'Ann' },
        member,
        updatedAt: member.updatedAt,
      },
    };
    expect(catalogue.get('member:updated')!.payload(event)).toEqual({ member });
  });

  it('keeps internal events internal', () => {
    for (const internal of [
      'MemberValueClaimed',
      'MemberValueReleased',
      'MemberCreated',
      'MemberWriteFenced',
      'MemberTokenIssued',
      'MemberRoleCreated',
      'ApiKeyCreated',
      'WorkspaceUpdated',
      'ClaimTaken',
      'ClaimFenced',
      'WorkflowCreated',
      'AssignmentStarted',
      'AssignmentCancelled',
      'TaskDeleted',
    ]) {
      expect({ internal, public: catalogue.fromSource(internal) }).toEqual({ internal, public: [] });
      expect(catalogue.get(internal)).toBeUndefined();
    }
  });

  it('refuses one public event declared by two features, and one without a source', () => {
    const def = (feature: string) =>
      definePublicEvent<
        'chat:created',
        { chat: { id: number } },
        { type: 'ChatCreated'; data: { id: number } }
      >({
        name: 'chat:created',
        description: 'new chat started',
        feature,
        sources: ['ChatCreated'],
        payloadFields: ['chat'],
        payload: (e) => ({ chat: { id: e.data.id } }),
      });
    expect(() => new PublicEventCatalogue([def('chats'), def('inbox')])).toThrow(
      'Public event chat:created is declared by both chats and inbox',
    );
    expect(() => definePublicEvent({ ...def('chats'), payloadFields: ['chat'], sources: [] })).toThrow(
      /needs a source event type/,
    );
  });
});

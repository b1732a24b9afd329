import { FEATURES } from './app.module';
import { definePublicEvent, PublicEventCatalogue } from './core/events/public-events';
import { featureOf } from './core/features/feature';
import type { MemberSnapshot, MemberUpdated } from './modules/identity/domain/member.events';
import type { DataRecordCreated, DataRecordUpdated } from './modules/records';

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
  it('lists every public event of the features of this build, in the spec order', () => {
    expect(catalogue.list().map((d) => d.name)).toEqual([
      'data_record:created',
      'data_record:updated',
      'data_record:changed',
      'member:updated',
      'chat:created',
      'chat.message.created',
      'message:received',
      'email.received',
      'chat:summary',
      'call:started',
      'call:completed',
      'call:summary',
      'task.created',
      'task.updated',
      'record.deleted',
      'workflow.completed',
      'workflow.failed',
    ]);
    expect(catalogue.fromSource('DataRecordCreated').map((d) => d.name)).toEqual([
      'data_record:created',
      'data_record:changed',
    ]);
    expect(catalogue.fromSource('DataRecordUpdated').map((d) => d.name)).toEqual([
      'data_record:updated',
      'data_record:changed',
    ]);
  });

  it('lists member:updated, emitted by identity from MemberUpdated', () => {
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
    // As the API shows a member: a field the snapshot lacks (an older event's) is null, never missing.
    expect(catalogue.get('member:updated')!.payload(event)).toEqual({
      member: { ...member, timezone: null, agentModel: null, agentInstructions: null },
    });
  });

  it('carries the record as it now stands, its type and its member (SPEC: dataRecord with fields)', () => {
    const dataType = { id: 4, slug: 'patients', name: 'Patients' };
    const contact = { id: 12, email: 'ann@example.com', phone: null, name: 'Ann', externalId: null };
    const created: DataRecordCreated = {
      type: 'DataRecordCreated',
      data: {
        recordId: 9,
        workspaceId: member.workspaceId,
        dataTypeId: 4,
        memberId: 12,
        externalId: 'p-1',
        fieldValues: { age: 41, email: 'ann@example.com' },
        dataType,
        member: contact,
        createdAt: '2026-11-21T10:00:00.000Z',
      },
    };
    const dataRecord = {
      id: 9,
      dataTypeId: 4,
      memberId: 12,
      externalId: 'p-1',
      fields: { age: 41, email: 'ann@example.com' },
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
    };
    expect(catalogue.get('data_record:created')!.payload(created)).toEqual({
      dataRecord,
      dataType,
      member: contact,
    });
    expect(catalogue.get('data_record:changed')!.payload(created)).toEqual({
      operation: 'created',
      dataRecord,
      dataType,
      member: contact,
    });
    const updated: DataRecordUpdated = {
      type: 'DataRecordUpdated',
      data: {
        recordId: 9,
        workspaceId: member.workspaceId,
        dataTypeId: 4,
        memberId: 12,
        externalId: 'p-1',
        changes: { age: 42 },
        previous: { age: 41 },
        fieldValues: { age: 42, email: 'ann@example.com' },
        dataType,
        member: contact,
        updatedAt: '2026-11-22T10:00:00.000Z',
      },
    };
    const after = {
      id: 9,
      dataTypeId: 4,
      memberId: 12,
      externalId: 'p-1',
      fields: { age: 42, email: 'ann@example.com' },
      updatedAt: '2026-11-22T10:00:00.000Z',
    };
    expect(catalogue.get('data_record:updated')!.payload(updated)).toEqual({
      dataRecord: after,
      dataType,
      member: contact,
      changedFields: ['age'],
      previousValues: { age: 41 },
    });
    expect(catalogue.get('data_record:changed')!.payload(updated)).toMatchObject({
      operation: 'updated',
      dataRecord: after,
    });
    // A deletion is record.deleted, carrying ids only, never the record's values.
    const [deleted] = catalogue.fromSource('DataRecordDeleted');
    expect(deleted.name).toBe('record.deleted');
    expect(
      deleted.payload({
        type: 'DataRecordDeleted',
        data: {
          recordId: 7,
          workspaceId: 'w',
          dataTypeId: 3,
          memberId: 5,
          externalId: 'crm-7',
          deletedAt: '2026-01-01T00:00:00.000Z',
        },
      }),
    ).toEqual({
      dataRecord: {
        id: 7,
        dataTypeId: 3,
        memberId: 5,
        externalId: 'crm-7',
        deletedAt: '2026-01-01T00:00:00.000Z',
      },
    });
    // Schema changes and grants are internal.
    for (const internal of ['DataTypeCreated', 'DataTypeUpdated', 'RecordGrantCreated'])
      expect(catalogue.fromSource(internal)).toEqual([]);
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

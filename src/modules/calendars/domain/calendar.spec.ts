import { deciderSpec } from '../../../core/testing/decider-spec';
import { ConflictError, ValidationError } from '../../../core/http/domain-errors';
import { calendarDecider, CalendarCommand } from './calendar';
import type { CalendarCreated } from './calendar.events';

const wid = '0190a0a0-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const spec = deciderSpec(calendarDecider);

const create = (over: Partial<CalendarCommand> = {}): CalendarCommand => ({
  type: 'CreateCalendar',
  calendarId: 7,
  workspaceId: wid,
  name: 'Clinic rota',
  ownerMemberId: 12,
  owner: 'active',
  now,
  ...over,
});

const created: CalendarCreated = {
  type: 'CalendarCreated',
  data: { calendarId: 7, workspaceId: wid, name: 'Clinic rota', ownerMemberId: 12, createdAt: now },
};

describe('calendar decider', () => {
  it('creates a calendar owned by an active member, its name trimmed', () => {
    spec
      .given([])
      .when(create({ name: '  Clinic rota ' }))
      .then([created]);
  });

  it("creates the workspace's own calendar (no owner)", () => {
    spec
      .given([])
      .when(create({ ownerMemberId: null, owner: 'unknown' }))
      .then([{ ...created, data: { ...created.data, ownerMemberId: null } }]);
  });

  it('refuses an owner who is not a member of the workspace, or archived, naming the field', () => {
    spec
      .given([])
      .when(create({ owner: 'unknown' }))
      .thenThrows(ValidationError, /^ownerMemberId: no member with id 12/);
    spec
      .given([])
      .when(create({ owner: 'archived' }))
      .thenThrows(ValidationError, /^ownerMemberId: member 12 is archived/);
  });

  it('refuses an empty or too long name', () => {
    spec
      .given([])
      .when(create({ name: '   ' }))
      .thenThrows(ValidationError, /^name: must not be empty/);
    spec
      .given([])
      .when(create({ name: 'x'.repeat(201) }))
      .thenThrows(ValidationError, /^name: must be at most 200/);
  });

  it('refuses to create the same calendar twice', () => {
    spec.given([created]).when(create()).thenThrows(ConflictError);
  });
});

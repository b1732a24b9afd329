import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { DEFAULT_SETTINGS, WorkspaceEvent, workspaceDecider } from './workspace';

const spec = deciderSpec(workspaceDecider);
const id = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-21T10:00:00.000Z';
const created: WorkspaceEvent = {
  type: 'WorkspaceCreated',
  data: { workspaceId: id, name: 'Acme', settings: DEFAULT_SETTINGS, createdAt: now },
};

describe('workspace decider', () => {
  it('creates a workspace with default settings', () => {
    spec.given([]).when({ type: 'CreateWorkspace', workspaceId: id, name: ' Acme ', now }).then([created]);
  });

  it('refuses to create a workspace twice', () => {
    spec
      .given([created])
      .when({ type: 'CreateWorkspace', workspaceId: id, name: 'Other', now })
      .thenThrows(ConflictError);
  });

  it('refuses an empty name, naming the field', () => {
    spec
      .given([])
      .when({ type: 'CreateWorkspace', workspaceId: id, name: '  ', now })
      .thenThrows(ValidationError, /^name:/);
  });

  it('records only what changed', () => {
    spec
      .given([created])
      .when({
        type: 'UpdateWorkspace',
        workspaceId: id,
        name: 'Acme',
        settings: { defaultMemberRoleId: 7, timezone: 'UTC' },
        now,
      })
      .then([
        {
          type: 'WorkspaceUpdated',
          data: { workspaceId: id, settings: { defaultMemberRoleId: 7 }, updatedAt: now },
        },
      ]);
  });

  it('emits nothing for an update that changes nothing', () => {
    spec.given([created]).when({ type: 'UpdateWorkspace', workspaceId: id, name: 'Acme', now }).then([]);
  });

  it('cannot update a workspace that does not exist', () => {
    spec
      .given([])
      .when({ type: 'UpdateWorkspace', workspaceId: id, name: 'X', now })
      .thenThrows(NotFoundError);
  });

  it('refuses a time zone the tz database does not know, naming the field', () => {
    spec
      .given([created])
      .when({ type: 'UpdateWorkspace', workspaceId: id, settings: { timezone: 'Mars/Olympus' }, now })
      .thenThrows(ValidationError, /^settings\.timezone: must be an IANA time zone/);
  });
});

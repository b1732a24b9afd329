import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { customToolkitDecider, CustomToolkitCommand, EMPTY_INPUT_SCHEMA, TOOLKIT_MAX_TOOLS } from './toolkit';
import { toolkitSlugClaims, TOOLKIT_SLUG_CLAIM } from './toolkit-slug-claim';
import type { CustomToolkitEvent } from './toolkit.events';

const spec = deciderSpec(customToolkitDecider);
const ws = '0190a6c4-0000-7000-8000-000000000001';
const other = '0190a6c4-0000-7000-8000-000000000002';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T11:00:00.000Z';
const target = { toolkitId: 5, workspaceId: ws, now: later };

const created: CustomToolkitEvent = {
  type: 'CustomToolkitCreated',
  data: {
    toolkitId: 5,
    workspaceId: ws,
    name: 'CRM tools',
    slug: 'crm-tools',
    description: null,
    enabled: true,
    createdAt: now,
  },
};

const schema = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] };

const toolCreated = (toolId: number, name: string): CustomToolkitEvent => ({
  type: 'CustomToolCreated',
  data: {
    toolkitId: 5,
    workspaceId: ws,
    toolId,
    tool: { name, displayName: name, description: null, prompt: null, chatModel: null, inputSchema: schema },
    createdAt: now,
  },
});

const createTool = (over: Partial<Extract<CustomToolkitCommand, { type: 'CreateTool' }>> = {}) =>
  ({ type: 'CreateTool', ...target, toolId: 9, name: 'lookup_order', ...over }) as CustomToolkitCommand;

describe('custom toolkit decider', () => {
  describe('toolkits', () => {
    it('creates an enabled toolkit, trimming the name', () => {
      spec
        .given([])
        .when({ type: 'CreateToolkit', ...target, now, name: ' CRM tools ', slug: 'crm-tools' })
        .then([created]);
    });

    it('refuses a slug that is not lower-case letters, digits, - or _', () => {
      for (const slug of ['CRM', 'crm tools', '-crm', '', 'x'.repeat(101)])
        spec
          .given([])
          .when({ type: 'CreateToolkit', ...target, name: 'X', slug })
          .thenThrows(ValidationError, /^slug: /);
    });

    it('refuses an empty name and a second create', () => {
      spec
        .given([])
        .when({ type: 'CreateToolkit', ...target, name: '  ', slug: 'x' })
        .thenThrows(ValidationError, /^name:/);
      spec
        .given([created])
        .when({ type: 'CreateToolkit', ...target, name: 'X', slug: 'x' })
        .thenThrows(ConflictError);
    });

    it('updates only what changed, recording the slug it gives up', () => {
      spec
        .given([created])
        .when({ type: 'UpdateToolkit', ...target, name: 'CRM tools', slug: 'crm', description: 'Orders' })
        .then([
          {
            type: 'CustomToolkitUpdated',
            data: {
              toolkitId: 5,
              workspaceId: ws,
              changes: { slug: 'crm', description: 'Orders' },
              previousSlug: 'crm-tools',
              updatedAt: later,
            },
          },
        ]);
      spec
        .given([created])
        .when({ type: 'UpdateToolkit', ...target, name: 'CRM tools' })
        .then([]);
    });

    it('honours If-Match on the toolkit version, not on changes of its tools', () => {
      const renamed: CustomToolkitEvent = {
        type: 'CustomToolkitUpdated',
        data: { toolkitId: 5, workspaceId: ws, changes: { name: 'B' }, updatedAt: now },
      };
      spec
        .given([created, renamed])
        .when({ type: 'UpdateToolkit', ...target, ifMatch: [1], name: 'C' })
        .thenThrows(PreconditionFailedError, /now at "2"/);
      // Tools come and go without moving the toolkit's version.
      spec
        .given([created, toolCreated(9, 'a'), toolCreated(10, 'b')])
        .when({ type: 'UpdateToolkit', ...target, ifMatch: [1], name: 'C' })
        .then([
          {
            type: 'CustomToolkitUpdated',
            data: { toolkitId: 5, workspaceId: ws, changes: { name: 'C' }, updatedAt: later },
          },
        ]);
    });

    it('enables and disables idempotently', () => {
      const disabled: CustomToolkitEvent = {
        type: 'CustomToolkitDisabled',
        data: { toolkitId: 5, workspaceId: ws, disabledAt: now },
      };
      spec
        .given([created])
        .when({ type: 'EnableToolkit', ...target })
        .then([]);
      spec
        .given([created])
        .when({ type: 'DisableToolkit', ...target })
        .then([
          { type: 'CustomToolkitDisabled', data: { toolkitId: 5, workspaceId: ws, disabledAt: later } },
        ]);
      spec
        .given([created, disabled])
        .when({ type: 'DisableToolkit', ...target })
        .then([]);
      spec
        .given([created, disabled])
        .when({ type: 'EnableToolkit', ...target })
        .then([{ type: 'CustomToolkitEnabled', data: { toolkitId: 5, workspaceId: ws, enabledAt: later } }]);
    });

    it('deletes a toolkit with each of its tools, and then knows it no more', () => {
      const deleteToolkit: CustomToolkitCommand = { type: 'DeleteToolkit', ...target };
      spec
        .given([created, toolCreated(10, 'b'), toolCreated(9, 'a')])
        .when(deleteToolkit)
        .then([
          {
            type: 'CustomToolDeleted',
            data: { toolkitId: 5, workspaceId: ws, toolId: 9, name: 'a', deletedAt: later },
          },
          {
            type: 'CustomToolDeleted',
            data: { toolkitId: 5, workspaceId: ws, toolId: 10, name: 'b', deletedAt: later },
          },
          {
            type: 'CustomToolkitDeleted',
            data: { toolkitId: 5, workspaceId: ws, slug: 'crm-tools', deletedAt: later },
          },
        ]);
      const deleted: CustomToolkitEvent = {
        type: 'CustomToolkitDeleted',
        data: { toolkitId: 5, workspaceId: ws, slug: 'crm-tools', deletedAt: now },
      };
      spec.given([created, deleted]).when(deleteToolkit).thenThrows(NotFoundError);
      spec.given([created, deleted]).when(createTool()).thenThrows(NotFoundError);
      spec
        .given([created, deleted])
        .when({ type: 'EnableToolkit', ...target })
        .thenThrows(NotFoundError);
    });

    it('is not found from another workspace', () => {
      for (const command of [
        { type: 'UpdateToolkit', ...target, workspaceId: other, name: 'X' },
        { type: 'DisableToolkit', ...target, workspaceId: other },
        { type: 'DeleteToolkit', ...target, workspaceId: other },
        createTool({ workspaceId: other }),
      ] as CustomToolkitCommand[])
        spec
          .given([created])
          .when(command)
          .thenThrows(NotFoundError, /Custom toolkit not found/);
    });
  });

  describe('tools', () => {
    it('creates a tool with defaults: display name from the name, no arguments', () => {
      spec
        .given([created])
        .when(createTool())
        .then([
          {
            type: 'CustomToolCreated',
            data: {
              toolkitId: 5,
              workspaceId: ws,
              toolId: 9,
              tool: {
                name: 'lookup_order',
                displayName: 'lookup_order',
                description: null,
                prompt: null,
                chatModel: null,
                inputSchema: EMPTY_INPUT_SCHEMA,
              },
              createdAt: later,
            },
          },
        ]);
    });

    it('refuses names MCP does not allow', () => {
      for (const name of ['1st', '_x', 'has space', 'dot.name', 'é', 'a'.repeat(65), ''])
        spec
          .given([created])
          .when(createTool({ name }))
          .thenThrows(ValidationError, /^name: must be a letter/);
      spec
        .given([created])
        .when(createTool({ name: 'a'.repeat(64) }))
        .then([expect.anything()] as never);
    });

    it('keeps names unique in the toolkit whatever their case, but not across toolkits', () => {
      spec
        .given([created, toolCreated(9, 'lookup_order')])
        .when(createTool({ toolId: 10, name: 'Lookup_Order' }))
        .thenThrows(ConflictError, /^name: tool 9 of this toolkit is already named "lookup_order"$/);
      spec
        .given([created, toolCreated(9, 'a'), toolCreated(10, 'b')])
        .when({ type: 'UpdateTool', ...target, toolId: 10, name: 'A' })
        .thenThrows(ConflictError, /^name: tool 9/);
      // A deleted tool's name is free again.
      const gone: CustomToolkitEvent = {
        type: 'CustomToolDeleted',
        data: { toolkitId: 5, workspaceId: ws, toolId: 9, name: 'lookup_order', deletedAt: now },
      };
      spec
        .given([created, toolCreated(9, 'lookup_order'), gone])
        .when(createTool({ toolId: 10 }))
        .then([expect.objectContaining({ type: 'CustomToolCreated' })] as never);
    });

    it('refuses an invalid input schema naming its path, and a toolkit that is full', () => {
      spec
        .given([created])
        .when(createTool({ inputSchema: { type: 'object', properties: { n: { type: 'integr' } } } }))
        .thenThrows(ValidationError, /^inputSchema\.properties\.n\.type: /);
      const full = Array.from({ length: TOOLKIT_MAX_TOOLS }, (_, i) => toolCreated(100 + i, `t${i}`));
      spec
        .given([created, ...full])
        .when(createTool())
        .thenThrows(ValidationError, new RegExp(`at most ${TOOLKIT_MAX_TOOLS} tools`));
    });

    it('updates only what changed; the same schema again is no change', () => {
      spec
        .given([created, toolCreated(9, 'lookup_order')])
        .when({
          type: 'UpdateTool',
          ...target,
          toolId: 9,
          displayName: 'Look up an order',
          description: 'Finds an order',
          chatModel: 'gpt-4o-mini',
          inputSchema: { ...schema },
        })
        .then([
          {
            type: 'CustomToolUpdated',
            data: {
              toolkitId: 5,
              workspaceId: ws,
              toolId: 9,
              changes: {
                displayName: 'Look up an order',
                description: 'Finds an order',
                chatModel: 'gpt-4o-mini',
              },
              updatedAt: later,
            },
          },
        ]);
      spec
        .given([created, toolCreated(9, 'lookup_order')])
        .when({ type: 'UpdateTool', ...target, toolId: 9, name: 'lookup_order', inputSchema: schema })
        .then([]);
      // The store keeps JSON as jsonb (keys reordered): the same schema in another key order is no change.
      spec
        .given([created, toolCreated(9, 'lookup_order')])
        .when({
          type: 'UpdateTool',
          ...target,
          toolId: 9,
          inputSchema: { required: ['orderId'], properties: { orderId: { type: 'string' } }, type: 'object' },
        })
        .then([]);
    });

    it("checks If-Match against the tool's own version", () => {
      const updated: CustomToolkitEvent = {
        type: 'CustomToolUpdated',
        data: { toolkitId: 5, workspaceId: ws, toolId: 9, changes: { prompt: 'p' }, updatedAt: now },
      };
      const given = [created, toolCreated(9, 'a'), toolCreated(10, 'b'), updated];
      spec
        .given(given)
        .when({ type: 'DeleteTool', ...target, toolId: 9, ifMatch: [1] })
        .thenThrows(PreconditionFailedError);
      spec
        .given(given)
        .when({ type: 'DeleteTool', ...target, toolId: 9, ifMatch: [2] })
        .then([
          {
            type: 'CustomToolDeleted',
            data: { toolkitId: 5, workspaceId: ws, toolId: 9, name: 'a', deletedAt: later },
          },
        ]);
      // Tool 9's change does not make a write to tool 10 stale.
      spec
        .given(given)
        .when({ type: 'UpdateTool', ...target, toolId: 10, ifMatch: [1], prompt: 'q' })
        .then([expect.objectContaining({ type: 'CustomToolUpdated' })] as never);
    });

    it('is not found in another toolkit or once deleted', () => {
      spec
        .given([created])
        .when({ type: 'UpdateTool', ...target, toolId: 9, prompt: 'x' })
        .thenThrows(NotFoundError, /Tool not found/);
      spec
        .given([created])
        .when({ type: 'DeleteTool', ...target, toolId: 9 })
        .thenThrows(NotFoundError, /Tool not found/);
    });
  });

  describe('slug claims', () => {
    const state = customToolkitDecider.initialState();
    it('takes the slug on create, moves it on a change, frees it on delete', () => {
      expect(toolkitSlugClaims([created], state)).toEqual({
        take: [{ scope: ws, kind: TOOLKIT_SLUG_CLAIM, value: 'crm-tools' }],
        release: [],
      });
      expect(
        toolkitSlugClaims(
          [
            {
              type: 'CustomToolkitUpdated',
              data: {
                toolkitId: 5,
                workspaceId: ws,
                changes: { slug: 'crm' },
                previousSlug: 'crm-tools',
                updatedAt: now,
              },
            },
          ],
          state,
        ),
      ).toEqual({
        take: [{ scope: ws, kind: TOOLKIT_SLUG_CLAIM, value: 'crm' }],
        release: [{ scope: ws, kind: TOOLKIT_SLUG_CLAIM, value: 'crm-tools' }],
      });
      expect(
        toolkitSlugClaims(
          [
            {
              type: 'CustomToolkitDeleted',
              data: { toolkitId: 5, workspaceId: ws, slug: 'crm', deletedAt: now },
            },
          ],
          state,
        ),
      ).toEqual({ take: [], release: [{ scope: ws, kind: TOOLKIT_SLUG_CLAIM, value: 'crm' }] });
    });

    it('holds while the toolkit is live with that slug in that workspace', () => {
      expect(TOOLKIT_SLUG_CLAIM.holds([created], 'crm-tools', ws)).toBe(true);
      expect(TOOLKIT_SLUG_CLAIM.holds([created], 'crm-tools', other)).toBe(false);
      expect(TOOLKIT_SLUG_CLAIM.holds([created], 'crm', ws)).toBe(false);
    });
  });
});

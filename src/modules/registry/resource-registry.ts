export type ResourceScope = 'workspace' | 'org' | 'any';

export interface ResourceMetadata {
  slug: string;
  label: string;
  unit: string;
  unitPlural: string;
  description: string;
  /** The workspace feature flag the resource needs, or "none". */
  requiresFeature: string;
  scope: ResourceScope;
}

const r = (
  slug: string,
  label: string,
  unit: string,
  unitPlural: string,
  description: string,
  requiresFeature = 'none',
  scope: ResourceScope = 'workspace',
): ResourceMetadata => ({ slug, label, unit, unitPlural, description, requiresFeature, scope });

/** One entry per resource kind the service has; the public registry serves this list. */
export const RESOURCES: readonly ResourceMetadata[] = Object.freeze([
  r(
    'workspace',
    'Workspaces',
    'workspace',
    'workspaces',
    'A tenant: every other resource lives in one workspace.',
    'none',
    'org',
  ),
  r('member', 'Members', 'member', 'members', 'A person or agent account placed in a workspace with a role.'),
  r('member-role', 'Roles', 'role', 'roles', 'A named set of scopes granted to members; five are built in.'),
  r(
    'api-key',
    'API keys',
    'API key',
    'API keys',
    'A bearer credential of an account with chosen scopes and an expiry.',
    'none',
    'any',
  ),
  r(
    'invitation',
    'Invitations',
    'invitation',
    'invitations',
    'An invitation for an email address to join with a role.',
  ),
  r('chat', 'Chats', 'chat', 'chats', 'A conversation over phone-sms, phone-voice, web-chat or email.'),
  r(
    'message',
    'Messages',
    'message',
    'messages',
    'A message in a chat with its delivery status (sent, delivered, failed).',
  ),
  r(
    'data-type',
    'Forms',
    'data type',
    'data types',
    'A custom data type (schema) with typed fields, used as a CRM.',
  ),
  r(
    'data-record',
    'Records',
    'record',
    'records',
    'An instance of a data type holding field values, optionally owned by a member.',
  ),
  r(
    'workflow',
    'Workflows',
    'workflow',
    'workflows',
    'An automated process run by an agent, optionally gated by member roles.',
  ),
  r('task', 'Tasks', 'task', 'tasks', 'A work item with a title, priority and assignments.'),
  r('assignment', 'Assignments', 'assignment', 'assignments', 'A member placed on a workflow.'),
  r(
    'inbox',
    'Inboxes',
    'inbox',
    'inboxes',
    'An email address that receives and sends chat messages.',
    'Email',
  ),
  r(
    'phone-number',
    'Phone numbers',
    'phone number',
    'phone numbers',
    'A number used for SMS and voice chats.',
    'Phone',
  ),
  r(
    'calendar',
    'Calendars',
    'calendar',
    'calendars',
    'A calendar owned by a member or the workspace.',
    'Calendar',
  ),
  r(
    'calendar-event',
    'Calendar events',
    'event',
    'events',
    'An event on a calendar with a title and a start time.',
    'Calendar',
  ),
  r('file', 'Files', 'file', 'files', 'An uploaded file.'),
  r('custom-toolkit', 'Toolkits', 'toolkit', 'toolkits', 'A group of custom tools that agents can call.'),
  r('custom-tool', 'Tools', 'tool', 'tools', 'A tool in a custom toolkit with an input schema and a prompt.'),
  r(
    'mcp-server',
    'MCP servers',
    'MCP server',
    'MCP servers',
    'An external MCP server whose tools agents can use.',
  ),
  r(
    'event-rule',
    'Event rules',
    'event rule',
    'event rules',
    'Pairs one event type with an action such as webhook:send.',
  ),
  r(
    'webhook-log',
    'Webhook logs',
    'delivery',
    'deliveries',
    'The history of webhook deliveries and their attempts.',
  ),
  r('oauth-app', 'Apps', 'app', 'apps', 'An OAuth 2.0 client that can act on a workspace.', 'none', 'any'),
]);

export function findResource(slug: string): ResourceMetadata | undefined {
  return RESOURCES.find((x) => x.slug === slug);
}

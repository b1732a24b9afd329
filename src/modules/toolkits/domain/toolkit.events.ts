/**
 * The events of a custom toolkit and its tools. A toolkit and its tools are one aggregate
 * (stream `customtoolkit-<id>`): a tool's name is unique in its toolkit, and deleting the
 * toolkit deletes its tools, both decided on one stream and appended atomically. Plain
 * typed objects; this file loads nothing of the feature's internals, so index.ts can
 * export it.
 */

export const customToolkitStream = (id: number): string => `customtoolkit-${id}`;

/** A JSON Schema document as stored (already checked: root `type: "object"`). */
export type JsonSchemaObject = Record<string, unknown>;

export interface CustomToolkitCreated {
  type: 'CustomToolkitCreated';
  data: {
    toolkitId: number;
    workspaceId: string;
    name: string;
    slug: string;
    description: string | null;
    enabled: boolean;
    createdAt: string;
  };
}

export interface CustomToolkitChanges {
  name?: string;
  slug?: string;
  description?: string | null;
}

export interface CustomToolkitUpdated {
  type: 'CustomToolkitUpdated';
  data: {
    toolkitId: number;
    workspaceId: string;
    changes: CustomToolkitChanges;
    /** The slug before a change of slug (the claim released with it); absent otherwise. */
    previousSlug?: string;
    updatedAt: string;
  };
}

export interface CustomToolkitEnabled {
  type: 'CustomToolkitEnabled';
  data: { toolkitId: number; workspaceId: string; enabledAt: string };
}

export interface CustomToolkitDisabled {
  type: 'CustomToolkitDisabled';
  data: { toolkitId: number; workspaceId: string; disabledAt: string };
}

export interface CustomToolkitDeleted {
  type: 'CustomToolkitDeleted';
  data: { toolkitId: number; workspaceId: string; slug: string; deletedAt: string };
}

/** A tool as created: every field a tool has. */
export interface CustomToolFields {
  name: string;
  displayName: string;
  description: string | null;
  prompt: string | null;
  chatModel: string | null;
  inputSchema: JsonSchemaObject;
}

export type CustomToolChanges = Partial<CustomToolFields>;

export interface CustomToolCreated {
  type: 'CustomToolCreated';
  data: { toolkitId: number; workspaceId: string; toolId: number; tool: CustomToolFields; createdAt: string };
}

export interface CustomToolUpdated {
  type: 'CustomToolUpdated';
  data: {
    toolkitId: number;
    workspaceId: string;
    toolId: number;
    changes: CustomToolChanges;
    updatedAt: string;
  };
}

export interface CustomToolDeleted {
  type: 'CustomToolDeleted';
  data: { toolkitId: number; workspaceId: string; toolId: number; name: string; deletedAt: string };
}

export type CustomToolkitEvent =
  | CustomToolkitCreated
  | CustomToolkitUpdated
  | CustomToolkitEnabled
  | CustomToolkitDisabled
  | CustomToolkitDeleted
  | CustomToolCreated
  | CustomToolUpdated
  | CustomToolDeleted;

export const CUSTOM_TOOLKIT_EVENT_TYPES: readonly CustomToolkitEvent['type'][] = [
  'CustomToolkitCreated',
  'CustomToolkitUpdated',
  'CustomToolkitEnabled',
  'CustomToolkitDisabled',
  'CustomToolkitDeleted',
  'CustomToolCreated',
  'CustomToolUpdated',
  'CustomToolDeleted',
];

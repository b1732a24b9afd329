/** The field types a data type may declare (SPEC "Data type": text, date, email, and more). */
export const FIELD_TYPES = [
  'text',
  'date',
  'email',
  'number',
  'boolean',
  'datetime',
  'phone',
  'url',
  'select',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Field types whose values are text: the ones `search` matches when indexed. */
export const TEXT_LIKE_TYPES: readonly FieldType[] = ['text', 'email', 'phone', 'url', 'select'];

/** Workspace-wide (every member reads the form) or admin-only (its records need records:admin). */
export const VISIBILITIES = ['workspace', 'admin_only'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export interface DataField {
  name: string;
  slug: string;
  fieldType: FieldType;
  required: boolean;
  shouldIndex: boolean;
  /** Only for `select`: the allowed values. */
  options?: string[];
}

export const dataTypeStream = (id: number): string => `datatype-${id}`;

/**
 * The ReferenceGate target of a type's fields: a schema change of its fields is a removal
 * of it; a record write waits for such removals before it re-reads the type (RecordWriter).
 */
export const dataTypeFieldsTarget = (id: number): string => `datatype-${id}-fields`;

export interface DataTypeCreated {
  type: 'DataTypeCreated';
  data: {
    dataTypeId: number;
    workspaceId: string;
    name: string;
    slug: string;
    isCollection: boolean;
    visibility: Visibility;
    fields: DataField[];
    /** The member who created it: the form's owner (SPEC "Scopes", special case 6). */
    ownerMemberId: number | null;
    createdAt: string;
  };
}

/** Only what changed; `fields` is the whole new list when the schema changed. */
export interface DataTypeUpdated {
  type: 'DataTypeUpdated';
  data: {
    dataTypeId: number;
    workspaceId: string;
    name?: string;
    slug?: string;
    isCollection?: boolean;
    visibility?: Visibility;
    fields?: DataField[];
    /** Fields gone (their values are dropped from every record). */
    removedFields?: string[];
    /** Fields whose type changed (their values are dropped: they no longer fit). */
    retypedFields?: string[];
    /** Select fields that lost options records held (those values, and only those, are dropped). */
    narrowedFields?: string[];
    updatedAt: string;
  };
}

export interface DataTypeDeleted {
  type: 'DataTypeDeleted';
  data: { dataTypeId: number; workspaceId: string; slug: string; deletedAt: string };
}

export type DataTypeEvent = DataTypeCreated | DataTypeUpdated | DataTypeDeleted;

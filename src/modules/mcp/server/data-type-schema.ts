/** A data type as the REST route answers it (the fields that matter here). */
export interface DataTypeDocument {
  id: number;
  name: string;
  slug: string;
  fields: { slug: string; name: string; fieldType: string; required: boolean; options?: string[] }[];
}

const PREFIX = 'workspace://';

export function dataTypeUri(workspaceId: string, dataTypeId: number): string {
  return `${PREFIX}${workspaceId}/data-types/${dataTypeId}`;
}

export function parseDataTypeUri(uri: string): { workspaceId: string; dataTypeId: number } | undefined {
  const m = /^workspace:\/\/([0-9a-f-]{36})\/data-types\/(\d{1,12})$/i.exec(uri);
  return m ? { workspaceId: m[1].toLowerCase(), dataTypeId: Number(m[2]) } : undefined;
}

/** JSON Schema (2020-12) of one field type's values. */
function fieldSchema(f: DataTypeDocument['fields'][number]): Record<string, unknown> {
  const base = { title: f.name };
  switch (f.fieldType) {
    case 'number':
      return { ...base, type: 'number' };
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'date':
      return { ...base, type: 'string', format: 'date' };
    case 'datetime':
      return { ...base, type: 'string', format: 'date-time' };
    case 'email':
      return { ...base, type: 'string', format: 'email' };
    case 'url':
      return { ...base, type: 'string', format: 'uri' };
    case 'select':
      return { ...base, type: 'string', ...(f.options ? { enum: f.options } : {}) };
    default:
      return { ...base, type: 'string' };
  }
}

/** The `fieldValues` of a record of this type, as a JSON Schema document. */
export function dataTypeSchema(uri: string, dt: DataTypeDocument): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: uri,
    title: dt.name,
    description: `fieldValues of a "${dt.slug}" record`,
    type: 'object',
    properties: Object.fromEntries(dt.fields.map((f) => [f.slug, fieldSchema(f)])),
    required: dt.fields.filter((f) => f.required).map((f) => f.slug),
    additionalProperties: false,
  };
}

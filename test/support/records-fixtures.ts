import type { TestApp } from './app';

export interface FieldInput {
  name?: string;
  slug: string;
  fieldType: string;
  required?: boolean;
  shouldIndex?: boolean;
  options?: string[];
}

/** POST a data type and expect 201; fields get a name from their slug. */
export async function createDataType(
  t: TestApp,
  wid: string,
  token: string,
  body: { name?: string; slug: string; fields: FieldInput[]; isCollection?: boolean; visibility?: string },
): Promise<{ id: number; slug: string }> {
  const res = await t.request('POST', `/w/${wid}/data-types`, {
    token,
    body: { name: body.slug, ...body, fields: body.fields.map((f) => ({ name: f.slug, ...f })) },
  });
  if (res.status !== 201) throw new Error(`data type: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: number; slug: string };
}

/** A contact type: name (text, required, indexed), email (indexed), phone, age (number), tier (select, indexed), born (date). */
export const CONTACT_FIELDS: FieldInput[] = [
  { slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
  { slug: 'email', fieldType: 'email', shouldIndex: true },
  { slug: 'phone', fieldType: 'phone' },
  { slug: 'age', fieldType: 'number' },
  { slug: 'tier', fieldType: 'select', options: ['gold', 'silver'], shouldIndex: true },
  { slug: 'born', fieldType: 'date' },
];

export function recordsPath(wid: string, dataTypeId: number): string {
  return `/w/${wid}/data-types/${dataTypeId}/records`;
}

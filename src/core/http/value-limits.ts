/**
 * Bounds of values a body may carry into a PostgreSQL `integer` column or comparison:
 * past them the database raises "out of range for type integer" (a 500), so DTOs refuse
 * them first with a 400 naming the field.
 */
export const INT_ID_MAX = 2_147_483_647;

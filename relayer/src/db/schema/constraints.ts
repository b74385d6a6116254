// Constraint helpers of the schema. Foreign keys and check constraints carry the names PostgreSQL gives an
// inline `references` or `check` (<table>_<column>_fkey, <table>_<column>_check), the names the relayer's
// databases have had from the start.
import { type SQL, sql } from "drizzle-orm";
import { check, foreignKey, type PgColumn } from "drizzle-orm/pg-core";

/** `column in ('a', 'b', ...)`: the condition of a check constraint. */
export function oneOf(column: { name: string }, values: readonly string[]): SQL {
  const literals = values.map((value) => `'${value.replaceAll("'", "''")}'`).join(", ");
  return sql`${sql.identifier(column.name)} in (${sql.raw(literals)})`;
}

/** The check constraint <table>_<column>_check: the column holds one of `values` (or null, if nullable). */
export function checkOneOf(table: string, column: { name: string }, values: readonly string[]) {
  return check(`${table}_${column.name}_check`, oneOf(column, values));
}

/** The foreign key <table>_<column>_fkey from `column` to `target`. */
export function foreignKeyTo(table: string, column: PgColumn, target: PgColumn) {
  return foreignKey({ name: `${table}_${column.name}_fkey`, columns: [column], foreignColumns: [target] });
}

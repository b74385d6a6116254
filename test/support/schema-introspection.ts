// What a database schema holds, read from the PostgreSQL catalogs (PGlite's too) in a form that does not
// depend on the schema's name: tables with their columns (type, nullability, default), primary keys, unique,
// check and foreign-key constraints and indexes (columns, uniqueness, predicate), and sequences. The
// migrations test (test/relayer/migrations.test.ts) compares one with the drizzle schema.
import type { RawTx } from "../../relayer/src/db/client.ts";

export type ColumnDescription = { name: string; type: string; notNull: boolean; default: string | null };
export type KeyDescription = { name: string; columns: string[] };
export type CheckDescription = { name: string; expression: string };
export type ForeignKeyDescription = {
  name: string;
  columns: string[];
  /** The referenced table; schema-qualified only when it is in another schema. */
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
};
export type IndexDescription = {
  name: string;
  columns: string[];
  unique: boolean;
  method: string;
  predicate: string | null;
};
export type TableDescription = {
  name: string;
  /** Sorted by name (column order does not matter to the relayer: every query names its columns). */
  columns: ColumnDescription[];
  primaryKey: KeyDescription | null;
  uniques: KeyDescription[];
  checks: CheckDescription[];
  foreignKeys: ForeignKeyDescription[];
  /** Indexes of their own: not the ones that back the primary key or a unique constraint. */
  indexes: IndexDescription[];
};
export type SequenceDescription = {
  name: string;
  type: string;
  start: string;
  increment: string;
  min: string;
  max: string;
  cache: string;
  cycle: boolean;
  /** table.column of a serial column the sequence belongs to (null: a sequence of its own). */
  ownedBy: string | null;
};
export type SchemaDescription = { tables: TableDescription[]; sequences: SequenceDescription[] };

const FK_ACTIONS = new Map([
  ["a", "no action"],
  ["r", "restrict"],
  ["c", "cascade"],
  ["n", "set null"],
  ["d", "set default"],
]);

/** Describes `schema`, which must be first in the search path (expressions such as a serial column's
 * default name their objects relative to it). Tables named in `exclude` are left out. */
export async function describeSchema(tx: RawTx, schema: string, exclude: string[] = []): Promise<SchemaDescription> {
  const [current] = await tx.query<{ schema: string }>("select current_schema() as schema");
  if (current?.schema !== schema) throw new Error(`describeSchema: ${schema} is not first in the search path`);
  const skip = new Set(exclude);
  const json = async <T>(sqlText: string): Promise<T[]> => {
    const [row] = await tx.query<{ rows: T[] | string }>(`select coalesce(json_agg(x), '[]') as rows from (${sqlText}) x`, [schema]);
    const rows = row?.rows ?? [];
    return typeof rows === "string" ? (JSON.parse(rows) as T[]) : rows;
  };

  const tables = await json<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p') order by c.relname`,
  );
  const columns = await json<{ table: string; name: string; type: string; not_null: boolean; default: string | null }>(
    `select c.relname as table, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
            a.attnotnull as not_null, pg_get_expr(d.adbin, d.adrelid) as default
     from pg_attribute a
     join pg_class c on c.oid = a.attrelid
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where n.nspname = $1 and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped`,
  );
  const constraints = await json<{
    table: string;
    name: string;
    type: string;
    columns: string[];
    expression: string | null;
    ref_table: string | null;
    ref_schema: string | null;
    ref_columns: string[];
    on_delete: string;
    on_update: string;
  }>(
    `select c.relname as table, k.conname as name, k.contype as type,
            array(select a.attname from unnest(k.conkey) with ordinality u(attnum, i)
                  join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.attnum order by u.i) as columns,
            case when k.contype = 'c' then pg_get_expr(k.conbin, k.conrelid) end as expression,
            fc.relname as ref_table, fn.nspname as ref_schema,
            array(select a.attname from unnest(k.confkey) with ordinality u(attnum, i)
                  join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.attnum order by u.i) as ref_columns,
            k.confdeltype as on_delete, k.confupdtype as on_update
     from pg_constraint k
     join pg_class c on c.oid = k.conrelid
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_class fc on fc.oid = k.confrelid
     left join pg_namespace fn on fn.oid = fc.relnamespace
     where n.nspname = $1`,
  );
  const indexes = await json<{
    table: string;
    name: string;
    columns: string[];
    unique: boolean;
    method: string;
    predicate: string | null;
  }>(
    `select t.relname as table, i.relname as name, ix.indisunique as unique, am.amname as method,
            array(select pg_get_indexdef(ix.indexrelid, k, true) from generate_series(1, ix.indnatts) k order by k) as columns,
            pg_get_expr(ix.indpred, ix.indrelid) as predicate
     from pg_index ix
     join pg_class i on i.oid = ix.indexrelid
     join pg_class t on t.oid = ix.indrelid
     join pg_namespace n on n.oid = t.relnamespace
     join pg_am am on am.oid = i.relam
     where n.nspname = $1 and not exists (select 1 from pg_constraint k where k.conindid = ix.indexrelid and k.conrelid = ix.indrelid)`,
  );
  const sequences = await json<SequenceDescription>(
    `select c.relname as name, format_type(s.seqtypid, null) as type, s.seqstart::text as start,
            s.seqincrement::text as increment, s.seqmin::text as min, s.seqmax::text as max, s.seqcache::text as cache,
            s.seqcycle as cycle,
            (select t.relname || '.' || a.attname from pg_depend d
             join pg_class t on t.oid = d.refobjid
             join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
             where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.refclassid = 'pg_class'::regclass
               and d.deptype in ('a', 'i') limit 1) as "ownedBy"
     from pg_sequence s
     join pg_class c on c.oid = s.seqrelid
     join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1`,
  );

  const byName = <T extends { name: string }>(items: T[]) => items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    tables: tables
      .filter((t) => !skip.has(t.name))
      .map((t): TableDescription => {
        const own = constraints.filter((k) => k.table === t.name);
        const pk = own.find((k) => k.type === "p");
        return {
          name: t.name,
          columns: byName(
            columns.filter((c) => c.table === t.name).map((c) => ({ name: c.name, type: c.type, notNull: c.not_null, default: c.default })),
          ),
          primaryKey: pk ? { name: pk.name, columns: pk.columns } : null,
          uniques: byName(own.filter((k) => k.type === "u").map((k) => ({ name: k.name, columns: k.columns }))),
          checks: byName(own.filter((k) => k.type === "c").map((k) => ({ name: k.name, expression: k.expression ?? "" }))),
          foreignKeys: byName(
            own
              .filter((k) => k.type === "f")
              .map((k) => ({
                name: k.name,
                columns: k.columns,
                refTable: k.ref_schema === schema ? (k.ref_table ?? "") : `${k.ref_schema}.${k.ref_table}`,
                refColumns: k.ref_columns,
                onDelete: FK_ACTIONS.get(k.on_delete) ?? k.on_delete,
                onUpdate: FK_ACTIONS.get(k.on_update) ?? k.on_update,
              })),
          ),
          indexes: byName(
            indexes
              .filter((i) => i.table === t.name)
              .map((i) => ({ name: i.name, columns: i.columns, unique: i.unique, method: i.method, predicate: i.predicate })),
          ),
        };
      }),
    sequences: byName(sequences.filter((s) => !s.ownedBy || !skip.has(s.ownedBy.split(".")[0]))),
  };
}

/** What differs between two descriptions, one line an object (empty: the same). */
export function schemaDifferences(actual: SchemaDescription, expected: SchemaDescription): string[] {
  const differences: string[] = [];
  const compare = <T extends { name: string }>(
    where: string,
    kind: string,
    found: T[],
    wanted: T[],
    nested?: (a: T, b: T, where: string) => void,
  ) => {
    const foundByName = new Map(found.map((item) => [item.name, item]));
    const wantedByName = new Map(wanted.map((item) => [item.name, item]));
    for (const item of found) if (!wantedByName.has(item.name)) differences.push(`${where}${kind} ${item.name}: not expected`);
    for (const item of wanted) {
      const other = foundByName.get(item.name);
      if (!other) differences.push(`${where}${kind} ${item.name}: missing`);
      else if (nested) nested(other, item, `${where}${kind} ${item.name}: `);
      else if (canonical(other) !== canonical(item)) {
        differences.push(`${where}${kind} ${item.name}: is ${canonical(other)}, expected ${canonical(item)}`);
      }
    }
  };
  compare("", "table", actual.tables, expected.tables, (a, b, where) => {
    compare(where, "column", a.columns, b.columns);
    if (canonical(a.primaryKey) !== canonical(b.primaryKey)) {
      differences.push(`${where}primary key is ${canonical(a.primaryKey)}, expected ${canonical(b.primaryKey)}`);
    }
    compare(where, "unique constraint", a.uniques, b.uniques);
    compare(where, "check constraint", a.checks, b.checks);
    compare(where, "foreign key", a.foreignKeys, b.foreignKeys);
    compare(where, "index", a.indexes, b.indexes);
  });
  compare("", "sequence", actual.sequences, expected.sequences);
  return differences;
}

/** JSON with the keys of every object in sorted order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

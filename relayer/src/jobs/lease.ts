// A lease in sync_state: among several relayer processes on one database, the one holding it does a job
// that must run in one process at a time (sending the hot wallet's transactions, polling the device cloud).
// It expires after `ms` unless renewed, so a crashed holder is replaced.
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { syncState } from "../db/schema.ts";

export type Lease = ReturnType<typeof createLease>;

export function createLease(db: DbOrTx, name: string, ms: number) {
  const owner = randomUUID();
  return {
    /** Takes or renews the lease; true if this process holds it now. */
    async hold(): Promise<boolean> {
      const now = Date.now();
      const value = JSON.stringify({ owner, until: now + ms });
      const result = await db.execute(sql`
        insert into sync_state (name, value, updated_at) values (${name}, ${value}, now())
        on conflict (name) do update set value = excluded.value, updated_at = now()
        where (sync_state.value::jsonb ->> 'owner') = ${owner}
           or (sync_state.value::jsonb ->> 'until')::bigint < ${now}
        returning name`);
      return (result as unknown as { rows: unknown[] }).rows.length > 0;
    },
    /** Gives the lease up (on a clean stop), so another process takes over at once. */
    async release(): Promise<void> {
      await db
        .delete(syncState)
        .where(and(eq(syncState.name, name), sql`(value::jsonb ->> 'owner') = ${owner}`))
        .catch(() => undefined);
    },
  };
}

// Portal sessions in the database: a row a sign-in, named by the JWT's jti. requireUser accepts a JWT only
// while its row is neither revoked nor expired, so signing out takes effect on the next request on every
// relayer process sharing the database. Expired rows are deleted at sign-in, a bounded batch at a time: a
// sign-in adds one row and removes up to PURGE_BATCH, so the table holds the live sessions and little more.
import { and, eq, gt, inArray, isNull, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { sessions, users } from "../db/schema.ts";
import { newId } from "../ids.ts";
import type { JwtSigner, SessionClaims } from "./jwt.ts";

const PURGE_BATCH = 100;

/** Starts a session for the user: its row, then its JWT (expiring with the row). */
export async function startSession(db: Db, jwt: JwtSigner, user: { userId: string; tenantId: string }) {
  const sessionId = newId("ses");
  const signed = await jwt.sign({ ...user, sessionId });
  await db.insert(sessions).values({
    id: sessionId,
    userId: user.userId,
    tenantId: user.tenantId,
    createdAt: signed.issuedAt,
    expiresAt: signed.expiresAt,
  });
  await purgeExpiredSessions(db);
  return { ...signed, sessionId };
}

/** Ends a session (sign-out). Its JWT is refused from the next request on. */
export async function endSession(db: Db, sessionId: string): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
}

/** The user behind verified JWT claims while their session is live (not revoked, not expired), else
 * undefined. */
export async function liveSessionUser(db: Db, claims: SessionClaims) {
  const [row] = await db
    .select({ id: users.id, tenantId: users.tenantId, email: users.email, name: users.name })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.id, claims.sessionId),
        eq(sessions.userId, claims.userId),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql`now()`),
      ),
    )
    .limit(1);
  return row && row.tenantId === claims.tenantId ? row : undefined;
}

async function purgeExpiredSessions(db: Db): Promise<void> {
  const expired = db
    .select({ id: sessions.id })
    .from(sessions)
    .where(lte(sessions.expiresAt, sql`now()`))
    .limit(PURGE_BATCH);
  await db.delete(sessions).where(inArray(sessions.id, expired));
}

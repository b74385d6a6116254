// Schemas of the operations routes (/v1/health, /v1/health/ready).
import { z } from "@hono/zod-openapi";
import { LIVENESS_EXAMPLE, READINESS_EXAMPLE } from "./examples.ts";

export const Liveness = z.object({ status: z.literal("ok"), version: z.string() }).openapi({ example: LIVENESS_EXAMPLE });

const state = z.enum(["ok", "degraded", "down"]).openapi({
  description: "ok; degraded: answers, but not as it should (still ready); down: no answer in time, or an error",
});

const check = {
  state,
  latencyMs: z.number().int().openapi({ description: "Time the check took, ms" }),
  detail: z.string().optional().openapi({ description: "Why the check is not ok (or what it could not measure)" }),
};

export const ReadinessCheck = z.object(check).openapi("ReadinessCheck");

export const Readiness = z
  .object({
    status: z.enum(["ready", "degraded", "not_ready"]).openapi({
      description: "ready: every check ok; degraded: none down, some degraded (200); not_ready: a check is down (503)",
    }),
    checkedAt: z.string().openapi({ description: "When the checks ran (answers are shared for up to 1 s)" }),
    checks: z.object({
      database: ReadinessCheck.openapi({ description: "The relayer's database: `select 1`" }),
      rpc: z
        .object({ ...check, blockNumber: z.number().int().optional().openapi({ description: "The chain head (eth_blockNumber)" }) })
        .openapi({ description: "The chain's JSON-RPC endpoint: eth_blockNumber" }),
      indexer: z
        .object({
          ...check,
          indexedBlock: z.number().int().optional().openapi({ description: "The latest block the indexer has indexed" }),
          lagBlocks: z.number().int().optional().openapi({
            description: "Blocks between the chain head and indexedBlock; degraded above READY_INDEXER_MAX_LAG_BLOCKS (20 by default)",
          }),
        })
        .openapi({ description: "The indexer: its status, and its lag behind the chain head" }),
      deviceCloud: ReadinessCheck.openapi({ description: "The device cloud: reachable (GET /health answers below 500)" }),
    }),
  })
  .openapi("Readiness", { example: READINESS_EXAMPLE });

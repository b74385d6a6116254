// Evidence as the interface shows it. Historical evidence is fixed sample data; a project's latest
// evidence is live: its energy cluster describes the project's latest attested telemetry batch that has a
// Merkle root (its readings, root, device and batch sequence, and its anchor on the relayer's chain: the
// transaction, the batches root and the batch's proof in the batches tree) once there is one.
import type { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { SAMPLE_EVIDENCE, liveEvidenceRef } from "./sample-data.ts";
import type { Evidence } from "./schemas.ts";

type LatestBatch = {
  readings: number;
  merkle_root: string;
  device_id: string;
  batch_sequence: number | string;
  attestation_status: string;
  tx: string | null;
  batches_root: string | null;
  batch_proof: string[] | null;
};

export async function evidenceView(db: Db, chainName: string, ref: string): Promise<z.output<typeof Evidence> | undefined> {
  const sample = SAMPLE_EVIDENCE.find((e) => e.evidence_ref === ref);
  if (!sample || liveEvidenceRef(sample.project_id) !== ref) return sample;
  const result = await db.execute(sql`
    select b.readings, b.merkle_root, b.device_id, b.batch_sequence, b.attestation_status,
      coalesce(b.anchor_tx_hash, t.tx_hash) as tx, a.batches_root, b.batch_proof
    from energy_batches b
      left join energy_anchors a on a.anchor_id = b.anchor_id
      left join chain_transactions t on t.ref = b.anchor_id
    where b.project_id = ${sample.project_id} and b.merkle_root is not null
    order by b.received_at desc, b.batch_id desc
    limit 1`);
  const [latest] = (result as unknown as { rows: LatestBatch[] }).rows;
  if (!latest) return sample;
  return {
    ...sample,
    clusters: {
      ...sample.clusters,
      energy_evidence: {
        readings: Number(latest.readings),
        merkle_root: latest.merkle_root,
        device_id: latest.device_id,
        batch_sequence: Number(latest.batch_sequence),
        anchor: {
          chain: chainName,
          tx: latest.tx ?? "",
          status: latest.attestation_status,
          batches_root: latest.batches_root ?? "",
          batch_proof: latest.batch_proof ?? [],
        },
      },
    },
  };
}

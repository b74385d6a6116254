// Seeding the sandbox: its OAuth client (created once; the secret is only stored as a hash, and an existing
// client keeps its secret) and the sample devices (created once; their records then follow their readings).
import { eq } from "drizzle-orm";
import type { DbOrTx } from "../db/client.ts";
import { energyClients, energyDevices } from "../db/schema.ts";
import { hashClientSecret } from "./auth/client-credentials.ts";
import { SAMPLE_ENERGY_DEVICES } from "./sample-data.ts";
import { statsOf } from "./telemetry/anomaly.ts";

export type EnergyClientSpec = { clientId: string; clientSecret: string; name?: string };

export async function seedEnergySandbox(tx: DbOrTx, client: EnergyClientSpec) {
  const [created] = await tx
    .insert(energyClients)
    .values({
      clientId: client.clientId,
      name: client.name ?? "Sample sandbox client",
      secretHash: hashClientSecret(client.clientSecret),
    })
    .onConflictDoNothing()
    .returning({ clientId: energyClients.clientId });
  const [row] = await tx
    .select({ clientId: energyClients.clientId })
    .from(energyClients)
    .where(eq(energyClients.clientId, client.clientId));
  const devices: string[] = [];
  for (const d of SAMPLE_ENERGY_DEVICES) {
    const power = statsOf(d.power.samples, d.power.meanW, d.power.stdW);
    await tx
      .insert(energyDevices)
      .values({
        deviceId: d.deviceId,
        projectId: d.projectId,
        name: d.name,
        meterEpoch: d.meterEpoch,
        lastSequenceNumber: d.lastSequenceNumber,
        lastEnergyWhCumulative: d.lastEnergyWhCumulative,
        baselineReadingsRequired: d.baselineReadingsRequired,
        baselineReadings: d.baselineReadings,
        signingPublicKey: d.signingPublicKey,
        powerSamples: power.samples,
        powerMean: power.mean,
        powerM2: power.m2,
        deregisteredAt: d.deregistered ? new Date() : null,
      })
      .onConflictDoNothing();
    devices.push(d.deviceId);
  }
  return { clientId: row.clientId, created: created !== undefined, devices };
}

// Seeding a tenant: its developer login, API keys, devices and revenue participants. Idempotent: what
// exists (by email, device id, address) is kept; keys are only created (and returned, in plaintext, this
// once) when the tenant has none of that name.
import { and, eq } from "drizzle-orm";
import { generateApiKey, hashApiKey } from "./auth/api-keys.ts";
import type { PasswordHasher } from "./auth/passwords.ts";
import { chainDeviceId } from "./chain/device-id.ts";
import { payoutAddress } from "./payments/payout-address.ts";
import { countDevice } from "./payments/usage-totals.ts";
import type { Db } from "./db/client.ts";
import { apiKeys, devices, participants, tenants, users } from "./db/schema.ts";
import { type EnergyClientSpec, seedEnergySandbox } from "./energy/seed.ts";
import { newId } from "./ids.ts";

export type SeedSpec = {
  /** `powerOnAtZeroConfirmations`: the tenant's devices power on at payment.succeeded rather than at
   * payment.confirmed (a documented risk: a reorganisation can remove a payment whose session started);
   * absent: POWER_ON_AT_ZERO_CONFIRMATIONS. Given for an existing tenant, it replaces the tenant's choice. */
  tenant: { id: string; name: string; powerOnAtZeroConfirmations?: boolean };
  user?: { email: string; password: string; name: string };
  apiKeys?: Array<{ name: string; role: "developer" | "agent" }>;
  /** Devices; with `assetOwner` and `operator` (addresses, EIP-55 checked) their payout parties: the relayer
   * creates each such device's split when it starts (or when the device is first quoted). */
  devices?: Array<{
    id: string;
    name: string;
    deviceClass: string;
    region: string;
    tiers: Record<string, number>;
    assetOwner?: string;
    operator?: string;
  }>;
  participants?: Array<{ name: string; address: string }>;
  /** The energy sandbox's OAuth client (created once, secret stored hashed) and, with it, the sandbox's
   * sample devices. */
  energyClient?: EnergyClientSpec;
};

export type SeedResult = {
  tenantId: string;
  user?: { id: string; email: string };
  createdKeys: Array<{ id: string; name: string; role: "developer" | "agent"; key: string }>;
  devices: string[];
  participants: Array<{ id: string; name: string; address: string }>;
  /** The sandbox client (created: false when it existed, with the secret it had) and sample devices. */
  energy?: { clientId: string; created: boolean; devices: string[] };
};

export async function seed(db: Db, spec: SeedSpec, passwords: PasswordHasher): Promise<SeedResult> {
  return db.transaction(async (tx) => {
    await tx.insert(tenants).values({ id: spec.tenant.id, name: spec.tenant.name }).onConflictDoNothing();
    if (spec.tenant.powerOnAtZeroConfirmations !== undefined) {
      await tx
        .update(tenants)
        .set({ powerOnAtZeroConfirmations: spec.tenant.powerOnAtZeroConfirmations })
        .where(eq(tenants.id, spec.tenant.id));
    }
    const result: SeedResult = { tenantId: spec.tenant.id, createdKeys: [], devices: [], participants: [] };

    if (spec.user) {
      const email = spec.user.email.toLowerCase();
      const [existing] = await tx.select().from(users).where(eq(users.email, email));
      if (existing && existing.tenantId !== spec.tenant.id) throw new Error(`${email} belongs to another tenant`);
      const id = existing?.id ?? newId("usr");
      if (!existing) {
        await tx.insert(users).values({
          id,
          tenantId: spec.tenant.id,
          email,
          name: spec.user.name,
          passwordHash: await passwords.hash(spec.user.password),
        });
      }
      result.user = { id, email };
    }

    for (const key of spec.apiKeys ?? []) {
      const [existing] = await tx
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .where(and(eq(apiKeys.tenantId, spec.tenant.id), eq(apiKeys.name, key.name)));
      if (existing) continue;
      const plaintext = generateApiKey();
      const id = newId("key");
      await tx.insert(apiKeys).values({
        id,
        tenantId: spec.tenant.id,
        name: key.name,
        role: key.role,
        keyHash: hashApiKey(plaintext),
        last4: plaintext.slice(-4),
      });
      result.createdKeys.push({ id, name: key.name, role: key.role, key: plaintext });
    }

    for (const device of spec.devices ?? []) {
      const parties =
        device.assetOwner !== undefined || device.operator !== undefined
          ? {
              assetOwner: checksummed(device.assetOwner, `${device.id}: assetOwner`),
              operator: checksummed(device.operator, `${device.id}: operator`),
            }
          : {};
      const inserted = await tx
        .insert(devices)
        .values({ ...device, ...parties, tenantId: spec.tenant.id, chainDeviceId: chainDeviceId(device.id) })
        .onConflictDoNothing()
        .returning({ region: devices.region });
      for (const { region } of inserted) await countDevice(tx, region);
      result.devices.push(device.id);
    }

    for (const participant of spec.participants ?? []) {
      const address = participant.address.toLowerCase();
      await tx
        .insert(participants)
        .values({ id: newId("pt"), tenantId: spec.tenant.id, name: participant.name, address })
        .onConflictDoNothing();
      const [row] = await tx
        .select()
        .from(participants)
        .where(and(eq(participants.tenantId, spec.tenant.id), eq(participants.address, address)));
      result.participants.push({ id: row.id, name: row.name, address: row.address });
    }
    if (spec.energyClient) result.energy = await seedEnergySandbox(tx, spec.energyClient);
    return result;
  });
}

function checksummed(address: string | undefined, what: string): string {
  const parsed = address === undefined ? undefined : payoutAddress(address);
  if (!parsed) throw new Error(`${what} must be an address (EIP-55 checksum if mixed-case), not ${String(address)}`);
  return parsed;
}

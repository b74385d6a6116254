// The sample tenant the local stack and the end-to-end tests seed: a developer login, a developer and an
// agent API key, devices in three regions, and the three revenue participants (the local deployment's leg
// recipients: the local node's accounts 4, 5 and 6); and the energy sandbox's OAuth client (with it, seeding
// creates the sandbox's sample devices).
import { randomBytes } from "node:crypto";
import { mnemonicToAccount } from "viem/accounts";

/** The local node's mnemonic (Hardhat's default; public, for the local chain only). */
export const LOCAL_MNEMONIC = "test test test test test test test test test test test junk";

export function localAccount(index: number) {
  return mnemonicToAccount(LOCAL_MNEMONIC, { addressIndex: index });
}

export function localPrivateKey(index: number): `0x${string}` {
  const key = localAccount(index).getHdKey().privateKey;
  if (!key) throw new Error(`no private key for account ${index}`);
  return `0x${Buffer.from(key).toString("hex")}`;
}

/** Prices in micro-USD per tier. */
const kioskTiers = { "30m": 300_000, "1h": 500_000, "4h": 1_800_000, "24h": 9_000_000 };
const chargerTiers = { "30m": 400_000, "1h": 700_000, "4h": 2_500_000 };
const coldTiers = { "1h": 250_000, "4h": 900_000, "24h": 4_500_000 };

export const SAMPLE_DEVICES = [
  { id: "kiosk-nbo-001", name: "Solar kiosk, Kibera", deviceClass: "solar-kiosk", region: "KE-30", tiers: kioskTiers, powerW: 120 },
  { id: "kiosk-nbo-002", name: "Solar kiosk, Mathare", deviceClass: "solar-kiosk", region: "KE-30", tiers: kioskTiers, powerW: 120 },
  { id: "charger-los-001", name: "E-bike charger, Yaba", deviceClass: "ebike-charger", region: "NG-LA", tiers: chargerTiers, powerW: 500 },
  { id: "charger-los-002", name: "E-bike charger, Ikeja", deviceClass: "ebike-charger", region: "NG-LA", tiers: chargerTiers, powerW: 500 },
  { id: "cold-dar-001", name: "Cold room, Kariakoo", deviceClass: "cold-storage", region: "TZ-02", tiers: coldTiers, powerW: 800 },
] as const;

/** The energy sandbox's sample device with a registered signing key, and that key's Ed25519 seed (sample
 * data, public on purpose: it signs telemetry in tests and demos). */
export const SAMPLE_SIGNING_DEVICE = {
  deviceId: "mtr-kibera-002",
  ed25519Seed: "c1c652766ab61319367b4ce84b6bc1e287b9077c71f8d25d52e04692e7fff253",
} as const;

export function sampleSeedSpec(opts: { password?: string; email?: string; energyClientSecret?: string } = {}) {
  return {
    tenant: { id: "tn_sample", name: "Sunbeam Energy (sample)" },
    user: {
      email: opts.email ?? "dev@sunbeam.example",
      password: opts.password ?? randomBytes(12).toString("base64url"),
      name: "Sample developer",
    },
    apiKeys: [
      { name: "sample developer key", role: "developer" as const },
      { name: "sample agent key", role: "agent" as const },
    ],
    devices: SAMPLE_DEVICES.map(({ powerW: _powerW, ...device }) => ({ ...device, tiers: { ...device.tiers } })),
    participants: [
      { name: "Asset owners", address: localAccount(4).address },
      { name: "Operator", address: localAccount(5).address },
      { name: "Protocol", address: localAccount(6).address },
    ],
    energyClient: {
      clientId: "sandbox-sample-client",
      clientSecret: opts.energyClientSecret ?? randomBytes(32).toString("base64url"),
      name: "Sample sandbox client",
    },
  };
}

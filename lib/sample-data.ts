// The sample tenants the local stack and the end-to-end tests seed. The first: a developer login, a developer
// and an agent API key, five devices in three regions owned by three asset owners and run by two operators
// (each device's payout parties: the recipients of its own split's asset-owner and operator legs), the
// revenue participants (those parties and the protocol recipient of every split, the local node's account 6),
// and the energy sandbox's OAuth client (with it, seeding creates the sandbox's sample devices). The second
// tenant has devices, parties and keys of its own. Local node accounts: 4, 8 and 9 asset owners, 5 and 10
// operators of the first tenant; 11 and 12 of the second.
import { pbkdf2Sync, randomBytes } from "node:crypto";
import { HDKey, hdKeyToAccount } from "viem/accounts";

/** The local node's mnemonic (Hardhat's default; public, for the local chain only). */
export const LOCAL_MNEMONIC = "test test test test test test test test test test test junk";

/** The mnemonic's BIP-39 seed (no passphrase) as a BIP-32 root, computed once: viem's mnemonicToAccount
 * computes the seed (2,048 rounds of PBKDF2 in JavaScript) again for every account. */
let root: HDKey | undefined;

/** The local node's account `index` (m/44'/60'/0'/0/index), as viem's mnemonicToAccount derives it. */
export function localAccount(index: number) {
  root ??= HDKey.fromMasterSeed(pbkdf2Sync(LOCAL_MNEMONIC.normalize("NFKD"), "mnemonic", 2048, 64, "sha512"));
  return hdKeyToAccount(root, { addressIndex: index });
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

/** Local node accounts of the sample payout parties (the first tenant's "a" owner and operator are the
 * local deployment's asset-owner and operator accounts, 4 and 5). */
export const SAMPLE_PARTY_ACCOUNTS = {
  ownerA: 4,
  ownerB: 8,
  ownerC: 9,
  operatorA: 5,
  operatorB: 10,
  otherOwner: 11,
  otherOperator: 12,
} as const;

const party = (name: keyof typeof SAMPLE_PARTY_ACCOUNTS) => localAccount(SAMPLE_PARTY_ACCOUNTS[name]).address;

export const SAMPLE_DEVICES = [
  {
    id: "kiosk-nbo-001",
    name: "Solar kiosk, Kibera",
    deviceClass: "solar-kiosk",
    region: "KE-30",
    tiers: kioskTiers,
    powerW: 120,
    owner: "ownerA",
    operator: "operatorA",
  },
  {
    id: "kiosk-nbo-002",
    name: "Solar kiosk, Mathare",
    deviceClass: "solar-kiosk",
    region: "KE-30",
    tiers: kioskTiers,
    powerW: 120,
    owner: "ownerB",
    operator: "operatorA",
  },
  {
    id: "charger-los-001",
    name: "E-bike charger, Yaba",
    deviceClass: "ebike-charger",
    region: "NG-LA",
    tiers: chargerTiers,
    powerW: 500,
    owner: "ownerA",
    operator: "operatorB",
  },
  {
    id: "charger-los-002",
    name: "E-bike charger, Ikeja",
    deviceClass: "ebike-charger",
    region: "NG-LA",
    tiers: chargerTiers,
    powerW: 500,
    owner: "ownerC",
    operator: "operatorB",
  },
  {
    id: "cold-dar-001",
    name: "Cold room, Kariakoo",
    deviceClass: "cold-storage",
    region: "TZ-02",
    tiers: coldTiers,
    powerW: 800,
    owner: "ownerB",
    operator: "operatorA",
  },
] as const;

/** The second sample tenant's devices. */
export const OTHER_SAMPLE_DEVICES = [
  {
    id: "kiosk-kla-001",
    name: "Solar kiosk, Kawempe",
    deviceClass: "solar-kiosk",
    region: "UG-102",
    tiers: kioskTiers,
    powerW: 120,
    owner: "otherOwner",
    operator: "otherOperator",
  },
  {
    id: "kiosk-kla-002",
    name: "Solar kiosk, Nakawa",
    deviceClass: "solar-kiosk",
    region: "UG-102",
    tiers: kioskTiers,
    powerW: 120,
    owner: "otherOwner",
    operator: "otherOperator",
  },
] as const;

function seedDevices(list: ReadonlyArray<(typeof SAMPLE_DEVICES)[number] | (typeof OTHER_SAMPLE_DEVICES)[number]>) {
  return list.map(({ powerW: _powerW, owner, operator, ...device }) => ({
    ...device,
    tiers: { ...device.tiers },
    assetOwner: party(owner),
    operator: party(operator),
  }));
}

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
    devices: seedDevices(SAMPLE_DEVICES),
    participants: [
      { name: "Asset owner A", address: party("ownerA") },
      { name: "Operator A", address: party("operatorA") },
      { name: "Protocol", address: localAccount(6).address },
      { name: "Asset owner B", address: party("ownerB") },
      { name: "Asset owner C", address: party("ownerC") },
      { name: "Operator B", address: party("operatorB") },
    ],
    energyClient: {
      clientId: "sandbox-sample-client",
      clientSecret: opts.energyClientSecret ?? randomBytes(32).toString("base64url"),
      name: "Sample sandbox client",
    },
  };
}

/** The second sample tenant: developer and agent keys, its own devices and payout parties. */
export function otherSampleSeedSpec() {
  return {
    tenant: { id: "tn_sample_kla", name: "Lakeside Power (sample)" },
    apiKeys: [
      { name: "lakeside developer key", role: "developer" as const },
      { name: "lakeside agent key", role: "agent" as const },
    ],
    devices: seedDevices(OTHER_SAMPLE_DEVICES),
    participants: [
      { name: "Lakeside owner", address: party("otherOwner") },
      { name: "Lakeside operator", address: party("otherOperator") },
    ],
  };
}

// The sandbox's fixed sample data: projects, distributions with their waterfalls, evidence, and the
// sample devices seeded into the database (whose records then follow the readings they accept). Values
// are illustrative, not measurements from a real plant.
import { keccak256, toHex } from "viem";

/** Version of the interface description this sandbox implements. */
export const SPEC_VERSION = "0.2.0" as const;

export type SampleProject = {
  project_id: string;
  name: string;
  data_assurance: string;
  asset_readiness: string;
  assurance_state: string;
  status: string;
  installed_capacity_w: number;
  lifetime_generation_wh: number;
  performance_ratio: number;
  /** chain_refs.unit_token.token_id (chain_refs.chain is the chain the relayer anchors on). */
  unit_token_id: string;
};

export const SAMPLE_PROJECTS: SampleProject[] = [
  {
    project_id: "prj_kibera_solar",
    name: "Kibera Solar Microgrid",
    data_assurance: "metered",
    asset_readiness: "operational",
    assurance_state: "assured",
    status: "active",
    installed_capacity_w: 250_000,
    lifetime_generation_wh: 812_450_000,
    performance_ratio: 0.81,
    unit_token_id: "1",
  },
  {
    project_id: "prj_yaba_ebike",
    name: "Yaba E-Bike Charging Hub",
    data_assurance: "metered",
    asset_readiness: "operational",
    assurance_state: "provisionally_downgraded",
    status: "active",
    installed_capacity_w: 120_000,
    lifetime_generation_wh: 204_300_000,
    performance_ratio: 0.74,
    unit_token_id: "2",
  },
  {
    project_id: "prj_kariakoo_cold",
    name: "Kariakoo Solar Cold Room",
    data_assurance: "metered",
    asset_readiness: "commissioning",
    assurance_state: "pending",
    status: "commissioning",
    installed_capacity_w: 60_000,
    lifetime_generation_wh: 9_800_000,
    performance_ratio: 0.68,
    unit_token_id: "3",
  },
];

export const WATERFALL_LEGS = ["opex_reserve", "operator", "protocol_fee", "unit_holders"] as const;
export type WaterfallLeg = { leg: (typeof WATERFALL_LEGS)[number]; amount_minor: number };

export type SampleDistribution = {
  distribution_id: string;
  project_id: string;
  epoch: number;
  status: string;
  currency: string;
  gross_minor: number;
  waterfall: WaterfallLeg[];
  per_unit_minor: number;
  evidence_ref: string;
};

/** The legs of `gross` in basis points of opex reserve, operator and protocol fee; unit holders get the
 * rest, so the legs always sum to the gross amount. */
export function waterfall(gross: number, bps: { opex: number; operator: number; protocol: number }): WaterfallLeg[] {
  const opex = Math.floor((gross * bps.opex) / 10_000);
  const operator = Math.floor((gross * bps.operator) / 10_000);
  const protocol = Math.floor((gross * bps.protocol) / 10_000);
  return [
    { leg: "opex_reserve", amount_minor: opex },
    { leg: "operator", amount_minor: operator },
    { leg: "protocol_fee", amount_minor: protocol },
    { leg: "unit_holders", amount_minor: gross - opex - operator - protocol },
  ];
}

function distribution(id: string, projectId: string, epoch: number, currency: string, gross: number, units: number): SampleDistribution {
  const legs = waterfall(gross, { opex: 1000, operator: 2000, protocol: 200 });
  return {
    distribution_id: id,
    project_id: projectId,
    epoch,
    status: "executed",
    currency,
    gross_minor: gross,
    waterfall: legs,
    per_unit_minor: Math.floor(legs[3].amount_minor / units),
    evidence_ref: `ev_${id.slice("dst_".length)}`,
  };
}

export const SAMPLE_DISTRIBUTIONS: SampleDistribution[] = [
  distribution("dst_kibera_2026_01", "prj_kibera_solar", 1, "KES", 46_812_500, 10_000),
  distribution("dst_kibera_2026_02", "prj_kibera_solar", 2, "KES", 48_250_000, 10_000),
  distribution("dst_yaba_2026_01", "prj_yaba_ebike", 1, "NGN", 912_345_678, 25_000),
  distribution("dst_yaba_2026_02", "prj_yaba_ebike", 2, "NGN", 887_004_321, 25_000),
  distribution("dst_kariakoo_2026_02", "prj_kariakoo_cold", 1, "TZS", 1_204_500_000, 4_000),
];

export type EnergyAnchor = { chain: string; tx: string; status: string; batches_root: string; batch_proof: string[] };
export type SampleEvidence = {
  evidence_ref: string;
  project_id: string;
  distribution_id: string;
  clusters: {
    energy_evidence: {
      readings: number;
      merkle_root: string;
      device_id: string | null;
      batch_sequence: number | null;
      anchor: EnergyAnchor;
    };
    legal_evidence: { documents: string[]; status: string };
    settlement_evidence: { bank_confirmation: string; status: string };
    distribution_evidence: { audit_trail: string; status: string };
  };
};

/** The chain name of the sample evidence's anchors, which are illustrative and on no chain. */
export const SAMPLE_ANCHOR_CHAIN = "sample";

function sampleEvidence(d: SampleDistribution, readings: number): SampleEvidence {
  const slug = d.distribution_id.slice("dst_".length);
  return {
    evidence_ref: d.evidence_ref,
    project_id: d.project_id,
    distribution_id: d.distribution_id,
    clusters: {
      energy_evidence: {
        readings,
        merkle_root: keccak256(toHex(`sample merkle root ${slug}`)),
        device_id: null,
        batch_sequence: null,
        anchor: {
          chain: SAMPLE_ANCHOR_CHAIN,
          tx: keccak256(toHex(`sample anchor tx ${slug}`)),
          status: "anchored",
          batches_root: keccak256(toHex(`sample batches root ${slug}`)),
          batch_proof: [],
        },
      },
      legal_evidence: {
        documents: [`doc://${d.project_id}/power-purchase-agreement.pdf`, `doc://${d.project_id}/unit-holder-register-${slug}.pdf`],
        status: "verified",
      },
      settlement_evidence: { bank_confirmation: `doc://${d.project_id}/bank-confirmation-${slug}.pdf`, status: "confirmed" },
      distribution_evidence: { audit_trail: `audit://${d.project_id}/distributions/${d.distribution_id}`, status: "complete" },
    },
  };
}

export const SAMPLE_EVIDENCE: SampleEvidence[] = SAMPLE_DISTRIBUTIONS.map((d, i) => sampleEvidence(d, [2976, 2688, 2976, 2688, 1344][i]));

/** A project's live evidence: the evidence of its latest distribution, whose energy cluster shows the
 * project's latest attested telemetry batch once there is one. */
export function liveEvidenceRef(projectId: string): string | undefined {
  const latest = SAMPLE_DISTRIBUTIONS.filter((d) => d.project_id === projectId).sort((a, b) => b.epoch - a.epoch)[0];
  return latest?.evidence_ref;
}

export type SampleDevice = {
  deviceId: string;
  projectId: string;
  name: string;
  meterEpoch: number;
  lastSequenceNumber: number | null;
  lastEnergyWhCumulative: number | null;
  baselineReadingsRequired: number;
  baselineReadings: number;
  /** Ed25519 public key, raw 32 bytes in hex (signed telemetry is verified against it). */
  signingPublicKey: string | null;
  /** Interval power history (Welford): samples, mean and standard deviation in W. */
  power: { samples: number; meanW: number; stdW: number };
  deregistered: boolean;
};

const solarHistory = { samples: 2880, meanW: 2500, stdW: 500 };

/** The sample devices. mtr-yaba-002 is in its baseline window; mtr-kibera-003 is deregistered;
 * mtr-kibera-002 has a registered signing key (its private key is lib/sample-data.ts's, public on purpose). */
export const SAMPLE_ENERGY_DEVICES: SampleDevice[] = [
  device("mtr-kibera-001", "prj_kibera_solar", "Kibera feeder meter 1", 1, 4_320, 18_544_000),
  {
    ...device("mtr-kibera-002", "prj_kibera_solar", "Kibera feeder meter 2 (signed telemetry)", 1, 4_320, 17_980_250),
    signingPublicKey: "fb9e2972ed7b8573a9339a1aa6f368bf5395b9f9a41fae8590cebde5e948a430",
  },
  { ...device("mtr-kibera-003", "prj_kibera_solar", "Kibera feeder meter 3 (replaced)", 1, 1_210, 3_100_400), deregistered: true },
  device("mtr-kibera-004", "prj_kibera_solar", "Kibera feeder meter 4", 2, 980, 2_402_000),
  device("mtr-yaba-001", "prj_yaba_ebike", "Yaba charger bank A", 1, 2_016, 6_210_000),
  {
    ...device("mtr-yaba-002", "prj_yaba_ebike", "Yaba charger bank B (new)", 1, 90, 201_600),
    baselineReadingsRequired: 96,
    baselineReadings: 90,
    power: { samples: 89, meanW: 2240, stdW: 420 },
  },
  device("mtr-yaba-003", "prj_yaba_ebike", "Yaba charger bank C", 1, 1_440, 3_980_000),
  device("mtr-kariakoo-001", "prj_kariakoo_cold", "Kariakoo cold room meter", 1, 672, 1_612_800),
];

function device(
  deviceId: string,
  projectId: string,
  name: string,
  meterEpoch: number,
  lastSequenceNumber: number,
  lastEnergyWhCumulative: number,
): SampleDevice {
  return {
    deviceId,
    projectId,
    name,
    meterEpoch,
    lastSequenceNumber,
    lastEnergyWhCumulative,
    baselineReadingsRequired: 96,
    baselineReadings: 96,
    signingPublicKey: null,
    power: solarHistory,
    deregistered: false,
  };
}

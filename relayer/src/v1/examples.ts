// Examples of the /v1 bodies, for the OpenAPI document: one paid order's story (a quote of kiosk-nbo-001 for
// an hour, its order, the permit that paid it, the receipt and the split), so the examples agree with each
// other. Each schema file sets its schemas' `example` from here (plain values: typed by their schemas, the
// schemas and their examples would be typed by each other); test/relayer/openapi-representation.test.ts
// checks every operation has a request and a response example and that each one satisfies its schema.
const ORDER_ID = "ord_01JD2Y6Y8X3K5V4Q9T7R2M1N0P";
const QUOTE_ID = "qt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P";
const DEVICE_ID = "kiosk-nbo-001";
const CHAIN_DEVICE_ID = "0x3a39ca587cf5122c8834ee1b51fe3c0e356984b91634c6eab8537794e763efc4";
const ROUTER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const USDC = { symbol: "USDC", address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" } as const;
const SPLIT = "0xa16E02E87b7454126E5E10d957A927A7F5B5d2be";
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const DEPOSIT = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
const ASSET_OWNER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const OPERATOR = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const PROTOCOL = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc";
const PAY_TX = "0x8f1c6b2a4e3d5f7081a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1";
const REF = "0x0000000000000000000000000000000000000000000000000000000000000007";
const SIGNATURE = `0x${"3b".repeat(32)}${"5c".repeat(32)}1b`;
const BASE = "https://payments.example.com";

export const QUOTE_REQUEST_EXAMPLE = { deviceId: DEVICE_ID, chain: "base-sepolia", token: "USDC", tier: "1h" };

export const QUOTE_EXAMPLE = {
  quoteId: QUOTE_ID,
  deviceId: DEVICE_ID,
  chain: "base-sepolia",
  token: USDC,
  tier: "1h",
  durationSeconds: 3600,
  amountUsd: 0.5,
  tokenAmount: "500000",
  tokenDecimals: 6,
  expiresAt: "2026-03-01T12:05:00.000Z",
};

export const ORDER_REQUEST_EXAMPLE = {
  deviceId: DEVICE_ID,
  chain: "base-sepolia",
  token: "USDC",
  amountUsd: 0.5,
  quoteId: QUOTE_ID,
};

const PERMIT_DOMAIN = { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC.address };

export const ORDER_EXAMPLE = {
  id: ORDER_ID,
  status: "pending",
  deviceId: DEVICE_ID,
  quoteId: QUOTE_ID,
  chain: "base-sepolia",
  token: USDC,
  tier: "1h",
  durationSeconds: 3600,
  amountUsd: 0.5,
  tokenAmount: "500000",
  createdAt: "2026-03-01T12:00:30.000Z",
  expiresAt: "2026-03-01T12:15:30.000Z",
  paymentDetails: {
    chain: "base-sepolia",
    chainId: 84532,
    router: ROUTER,
    token: USDC,
    tokenDecimals: 6,
    split: SPLIT,
    amount: "500000",
    order: {
      orderId: "7",
      deviceId: CHAIN_DEVICE_ID,
      token: USDC.address,
      split: SPLIT,
      amount: "500000",
      expiry: "1772367330",
    },
    voucherSignature: SIGNATURE,
    permit: {
      domain: PERMIT_DOMAIN,
      types: {
        Permit: [
          { name: "owner", type: "address" },
          { name: "spender", type: "address" },
          { name: "value", type: "uint256" },
          { name: "nonce", type: "uint256" },
          { name: "deadline", type: "uint256" },
        ],
      },
      primaryType: "Permit",
      message: {
        spender: ROUTER,
        value: "500000",
        deadline: "64820554063442395838459181236328475946713095374834468476545447434219541291105",
      },
    },
    relay: {
      method: "POST",
      url: `${BASE}/v1/orders/${ORDER_ID}/permit`,
      body: '{"owner": "<wallet address>", "signature": "<65-byte permit signature>"}',
    },
    authorization: {
      domain: PERMIT_DOMAIN,
      types: {
        ReceiveWithAuthorization: [
          { name: "from", type: "address" },
          { name: "to", type: "address" },
          { name: "value", type: "uint256" },
          { name: "validAfter", type: "uint256" },
          { name: "validBefore", type: "uint256" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "ReceiveWithAuthorization",
      message: {
        to: ROUTER,
        value: "500000",
        validAfter: "0",
        validBefore: "1772367330",
        nonce: "0x8f4e1c0a3b2d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7",
      },
      relay: {
        method: "POST",
        url: `${BASE}/v1/orders/${ORDER_ID}/authorization`,
        body: '{"from": "<wallet address>", "signature": "<65-byte authorization signature>"}',
      },
    },
    transfer: {
      depositAddress: DEPOSIT,
      uri: `ethereum:${USDC.address}@84532/transfer?address=${DEPOSIT}&uint256=500000`,
      qrCodeUrl: `${BASE}/pay/${ORDER_ID}/transfer.svg`,
      expiresAt: "2026-03-01T12:15:30.000Z",
    },
    scanToPay: { uri: `${BASE}/pay/${ORDER_ID}`, qrCodeUrl: `${BASE}/pay/${ORDER_ID}/qr.svg` },
  },
  payment: null,
  settlement: null,
  device: { poweredOnAt: null, sessionEndsAt: null },
  relay: null,
};

export const PERMIT_SUBMISSION_EXAMPLE = { owner: PAYER, signature: SIGNATURE };
export const PERMIT2_SUBMISSION_EXAMPLE = { owner: PAYER, signature: SIGNATURE };
export const AUTHORIZATION_SUBMISSION_EXAMPLE = { from: PAYER, signature: SIGNATURE };

export const RELAY_ACCEPTED_EXAMPLE = { orderId: ORDER_ID, status: "sent", transactionHash: PAY_TX };
export const CANCELLATION_ACCEPTED_EXAMPLE = { orderId: ORDER_ID, status: "queued", transactionHash: null };

const LEGS = [
  { leg: "assetOwner", recipient: ASSET_OWNER, amount: "250000" },
  { leg: "operator", recipient: OPERATOR, amount: "200000" },
  { leg: "protocol", recipient: PROTOCOL, amount: "50000" },
] as const;

export const RECEIPT_EXAMPLE = {
  orderId: ORDER_ID,
  deviceId: DEVICE_ID,
  tier: "1h",
  amountUsd: 0.5,
  token: USDC,
  tokenAmount: "500000",
  chain: "base-sepolia",
  chainId: 84532,
  payment: { rail: "permit", payer: PAYER, transactionHash: PAY_TX, blockNumber: 18544625, paidAt: "2026-03-01T12:01:04.000Z" },
  settlement: { ref: REF, split: SPLIT, gross: "500000", legs: [...LEGS], transactionHash: PAY_TX },
  device: { poweredOnAt: "2026-03-01T12:01:06.000Z", sessionEndsAt: "2026-03-01T13:01:06.000Z", energyWh: null },
};

const ASSET_REF = { deviceId: DEVICE_ID, chainDeviceId: CHAIN_DEVICE_ID };

export const REVENUE_SPLIT_EXAMPLE = {
  orderId: ORDER_ID,
  deviceId: DEVICE_ID,
  ref: REF,
  split: SPLIT,
  asset: ASSET_REF,
  token: USDC,
  gross: "500000",
  grossUsd: 0.5,
  legs: [...LEGS],
  transactionHash: PAY_TX,
  blockNumber: 18544625,
  settledAt: "2026-03-01T12:01:04.000Z",
};

export const EARNINGS_EXAMPLE = {
  participant: { id: "pt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P", name: "Nairobi Solar Owners", address: ASSET_OWNER },
  earnings: [
    {
      token: USDC,
      credited: "250000",
      withdrawn: "0",
      claimable: "250000",
      byLeg: { assetOwner: "250000", operator: "0", protocol: "0" },
      settlements: 1,
      withdrawals: 0,
      bySplit: [{ split: SPLIT, asset: ASSET_REF, credited: "250000", withdrawn: "0", claimable: "250000", settlements: 1 }],
    },
  ],
  latestSettlements: [
    {
      orderId: ORDER_ID,
      split: SPLIT,
      asset: ASSET_REF,
      token: USDC,
      gross: "500000",
      credited: "250000",
      transactionHash: PAY_TX,
      settledAt: "2026-03-01T12:01:04.000Z",
    },
  ],
};

export const REVENUE_OVERVIEW_EXAMPLE = {
  range: "24h",
  bucket: "hour",
  from: "2026-02-28T13:00:00.000Z",
  to: "2026-03-01T12:30:00.000Z",
  totals: { orders: 1, grossUsd: 0.5 },
  series: [{ start: "2026-03-01T12:00:00.000Z", orders: 1, grossUsd: 0.5 }],
  byDevice: [{ deviceId: DEVICE_ID, orders: 1, grossUsd: 0.5 }],
  recentSplits: [
    {
      orderId: ORDER_ID,
      deviceId: DEVICE_ID,
      paidAt: "2026-03-01T12:01:04.000Z",
      amountUsd: 0.5,
      token: USDC,
      tokenAmount: "500000",
      transactionHash: PAY_TX,
      ref: REF,
      legs: [...LEGS],
    },
  ],
  participants: [
    {
      id: "pt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
      name: "Nairobi Solar Owners",
      address: ASSET_OWNER,
      earnings: [{ token: USDC, tokenDecimals: 6, credited: "250000", withdrawn: "0", claimable: "250000" }],
    },
  ],
  indexerAvailable: true,
};

/** keccak256(abi.encode(CHAIN_DEVICE_ID, ASSET_OWNER, OPERATOR)): the asset key of the device's split. */
const ASSET_KEY = "0xe114be75081a376db45a10027f5e6873dac973b2d891fee94e2cdf15f1b5b0d0";
const PAYOUT = {
  assetOwner: ASSET_OWNER,
  operator: OPERATOR,
  split: SPLIT,
  splitStatus: "created",
  assetKey: ASSET_KEY,
  pendingChange: null,
} as const;

export const DEVICE_EXAMPLE = {
  id: DEVICE_ID,
  name: "Kibera kiosk 1",
  deviceClass: "solar-kiosk",
  region: "KE-30",
  chainDeviceId: CHAIN_DEVICE_ID,
  tiers: [
    { tier: "30m", durationSeconds: 1800, priceUsd: 0.3 },
    { tier: "1h", durationSeconds: 3600, priceUsd: 0.5 },
  ],
  payout: PAYOUT,
  createdAt: "2026-01-15T08:00:00.000Z",
};

export const DEVICE_STATUS_EXAMPLE = {
  deviceId: DEVICE_ID,
  online: true,
  poweredOn: true,
  sessionEndsAt: "2026-03-01T13:01:06.000Z",
  checkedAt: "2026-03-01T12:10:00.000Z",
};

export const ASSET_EXAMPLE = {
  deviceId: DEVICE_ID,
  name: "Kibera kiosk 1",
  region: "KE-30",
  chainDeviceId: CHAIN_DEVICE_ID,
  payout: PAYOUT,
};

export const CHANGE_PAYOUT_PARTIES_EXAMPLE = { assetOwner: ASSET_OWNER, operator: OPERATOR };

export const PUBLIC_STATS_EXAMPLE = {
  energyKwh: 1284.512,
  powerSessions: 3920,
  co2AvoidedKg: 1027.61,
  onchainVolumeUsd: 1960.5,
  devices: { total: 42, online: 37 },
};

export const IMPACT_EXAMPLE = {
  activeDevices: 35,
  powerSessions: 3920,
  energyKwh: 1284.512,
  co2AvoidedKg: 1027.61,
  co2KgPerKwh: 0.8,
  regions: [
    {
      region: "KE-30",
      totalDevices: 20,
      activeDevices: 18,
      powerSessions: 2100,
      energyKwh: 690.2,
      co2AvoidedKg: 552.16,
      volumeUsd: 1050.5,
    },
  ],
  activeWindowDays: 30,
  updatedAt: "2026-03-01T12:10:00.000Z",
};

export const TICKET_REQUEST_EXAMPLE = {
  category: "no_power",
  message: "Paid for an hour but the socket has no power.",
  contact: "+254 700 000 000",
  orderId: ORDER_ID,
};

export const TICKET_EXAMPLE = {
  id: "tkt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  deviceId: DEVICE_ID,
  orderId: ORDER_ID,
  category: "no_power",
  status: "open",
  createdAt: "2026-03-01T12:20:00.000Z",
};

export const LOGIN_REQUEST_EXAMPLE = { email: "dev@example.com", password: "correct horse battery staple" };

export const LOGIN_RESPONSE_EXAMPLE = {
  accessToken: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMDFKRDJZNlk4WDNLNVY0UTlUN1IyTTFOMFAifQ.c2lnbmF0dXJl",
  tokenType: "Bearer",
  expiresIn: 900,
  expiresAt: "2026-03-01T12:15:00.000Z",
};

export const IDENTITY_EXAMPLE = {
  type: "api_key",
  tenant: { id: "ten_01JD2Y6Y8X3K5V4Q9T7R2M1N0P", name: "Nairobi Solar" },
  apiKey: { id: "key_01JD2Y6Y8X3K5V4Q9T7R2M1N0P", role: "developer" },
};

export const API_KEY_EXAMPLE = {
  id: "key_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  name: "Backend",
  role: "developer",
  prefix: "payg_",
  last4: "Q2x9",
  createdAt: "2026-03-01T09:00:00.000Z",
  lastUsedAt: "2026-03-01T12:00:30.000Z",
  revokedAt: null,
};

export const CREATED_API_KEY_EXAMPLE = {
  ...API_KEY_EXAMPLE,
  lastUsedAt: null,
  key: "payg_4f9Kq2Lm8Xv1Rt6Zc3Nb7Hs5Wd0Jy2Pa1B7dQ2x9",
};

export const CREATE_API_KEY_EXAMPLE = { name: "Backend", role: "developer" };

export const LIVENESS_EXAMPLE = { status: "ok", version: "1.0.0" };

export const READINESS_EXAMPLE = {
  status: "ready",
  checkedAt: "2026-03-01T12:10:00.000Z",
  checks: {
    database: { state: "ok", latencyMs: 2 },
    rpc: { state: "ok", latencyMs: 41, blockNumber: 18544640 },
    indexer: { state: "ok", latencyMs: 12, indexedBlock: 18544638, lagBlocks: 2 },
    deviceCloud: { state: "ok", latencyMs: 35 },
  },
};

export const CREATE_WEBHOOK_SUBSCRIPTION_EXAMPLE = {
  url: "https://example.com/webhooks/payg",
  eventTypes: ["payment.succeeded", "split.settled", "device.*"],
  description: "Order fulfilment",
};

export const UPDATE_WEBHOOK_SUBSCRIPTION_EXAMPLE = { eventTypes: ["payment.*", "device.*"] };

export const WEBHOOK_SUBSCRIPTION_EXAMPLE = {
  id: "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  url: "https://example.com/webhooks/payg",
  eventTypes: ["payment.succeeded", "split.settled", "device.*"],
  description: "Order fulfilment",
  status: "active",
  disabledReason: null,
  disabledAt: null,
  secretHint: "whsec_...k9Q=",
  previousSecretHint: null,
  previousSecretExpiresAt: null,
  deliveries: { pending: 0, succeeded: 12, failed: 0, lastActivityAt: "2026-03-01T12:01:05.000Z" },
  createdAt: "2026-03-01T09:00:00.000Z",
  updatedAt: "2026-03-01T09:00:00.000Z",
};

/** The secret a creation or a rotation shows once. */
export const WEBHOOK_SECRET_EXAMPLE = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3kHk9Q=";

export const WEBHOOK_TEST_QUEUED_EXAMPLE = {
  eventId: "evt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  type: "test.ping",
  subscriptionId: "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
};

export const WEBHOOK_DELIVERY_EXAMPLE = {
  id: "msg_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  subscriptionId: "whs_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  eventId: "evt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  eventType: "payment.succeeded",
  status: "succeeded",
  attempts: 1,
  attemptLimit: 5,
  nextAttemptAt: null,
  lastStatusCode: 200,
  lastError: null,
  createdAt: "2026-03-01T12:01:04.500Z",
  completedAt: "2026-03-01T12:01:04.700Z",
  attemptLog: [
    {
      attempt: 1,
      startedAt: "2026-03-01T12:01:04.550Z",
      finishedAt: "2026-03-01T12:01:04.700Z",
      durationMs: 150,
      statusCode: 200,
      error: null,
      responseExcerpt: "ok",
    },
  ],
};

export const WEBHOOK_DELIVERY_DETAIL_EXAMPLE = {
  ...WEBHOOK_DELIVERY_EXAMPLE,
  payload: {
    type: "payment.succeeded",
    data: {
      orderId: ORDER_ID,
      deviceId: DEVICE_ID,
      amountUsd: 0.5,
      token: USDC,
      tokenAmount: "500000",
      rail: "permit",
      payer: PAYER,
      transactionHash: PAY_TX,
      blockNumber: 18544625,
      paidAt: "2026-03-01T12:01:04.000Z",
    },
    id: "msg_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  },
};

export const WEBHOOK_EVENT_TYPES_EXAMPLE = {
  data: [
    {
      type: "payment.succeeded",
      summary: "An order was paid",
      fires: "When the payment of an order is indexed on-chain, on any rail, and the order turns success.",
      subscribable: true,
    },
  ],
  families: ["payment.*", "split.*", "revenue.*", "device.*", "ticket.*", "test.*"],
  delivery: { maxAttempts: 5, timeoutMs: 10000, retryDelaysMs: [60000, 300000, 1500000, 7500000], leaseMs: 30000 },
};

export const CREATED_WEBHOOK_SUBSCRIPTION_EXAMPLE = { ...WEBHOOK_SUBSCRIPTION_EXAMPLE, secret: WEBHOOK_SECRET_EXAMPLE };

export const ROTATED_WEBHOOK_SECRET_EXAMPLE = {
  ...WEBHOOK_SUBSCRIPTION_EXAMPLE,
  secretHint: "whsec_...a1B=",
  previousSecretHint: "whsec_...k9Q=",
  previousSecretExpiresAt: "2026-03-02T12:00:00.000Z",
  updatedAt: "2026-03-01T12:00:00.000Z",
  secret: "whsec_b3JkZXJzLWFyZS1wYWlkLWluLWZ1bGwtYTFCPQ==",
};

export const DEVICE_LIST_EXAMPLE = { data: [DEVICE_EXAMPLE], nextCursor: null };
export const ASSET_LIST_EXAMPLE = { data: [ASSET_EXAMPLE] };
export const CHANGED_PAYOUT_PARTIES_EXAMPLE = { ...ASSET_EXAMPLE, transactionId: "tx_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" };
export const API_KEY_LIST_EXAMPLE = { data: [API_KEY_EXAMPLE] };
export const REVENUE_SPLIT_PAGE_EXAMPLE = { data: [REVENUE_SPLIT_EXAMPLE], nextCursor: null };
export const WEBHOOK_SUBSCRIPTION_LIST_EXAMPLE = { data: [WEBHOOK_SUBSCRIPTION_EXAMPLE] };
export const WEBHOOK_DELIVERY_PAGE_EXAMPLE = { data: [WEBHOOK_DELIVERY_EXAMPLE], nextCursor: null };

/** The start of an order's event stream: its state, then the events as they happen. */
export const ORDER_EVENT_STREAM_EXAMPLE =
  `id: 0\nevent: state\ndata: ${JSON.stringify({ ...ORDER_EXAMPLE, paymentDetails: undefined })}\n\n` +
  `id: 2\nevent: payment.submitted\ndata: ${JSON.stringify({ rail: "permit", payer: PAYER })}\n\n`;

export const EVENT_EXAMPLE = {
  id: "evt_01JD2Y6Y8X3K5V4Q9T7R2M1N0P",
  type: "payment.succeeded",
  createdAt: "2026-03-01T12:01:04.500Z",
  data: WEBHOOK_DELIVERY_DETAIL_EXAMPLE.payload.data,
};
export const EVENT_PAGE_EXAMPLE = { data: [EVENT_EXAMPLE], nextCursor: null };

// Schemas of the order routes (/v1/orders/*): the order, its payment details, the relayer's rails and the
// receipt.
import { z } from "@hono/zod-openapi";
import { paymentRouterRailValues } from "../../../generated/abis.ts";
import { ChecksummedAddress, SplitLeg, Token, checksummedAddress } from "../representation.ts";
import { DeviceId } from "./shared-schemas.ts";
import {
  AUTHORIZATION_SUBMISSION_EXAMPLE,
  CANCELLATION_ACCEPTED_EXAMPLE,
  ORDER_EXAMPLE,
  ORDER_REQUEST_EXAMPLE,
  PERMIT2_SUBMISSION_EXAMPLE,
  PERMIT_SUBMISSION_EXAMPLE,
  RECEIPT_EXAMPLE,
  RELAY_ACCEPTED_EXAMPLE,
} from "./examples.ts";

export const OrderRequest = z
  .object({
    deviceId: DeviceId,
    chain: z.string().min(1).max(32),
    token: z.string().min(1).max(16),
    amountUsd: z
      .number()
      .positive()
      .max(1_000_000)
      .openapi({ description: "Must equal the quote's amount: the client cannot change it", example: 0.5 }),
    quoteId: z.string().min(1).max(64),
  })
  .strict()
  .openapi("OrderRequest", { example: ORDER_REQUEST_EXAMPLE });

const Hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "a 20-byte hex address");

export const PaymentDetails = z
  .object({
    chain: z.string(),
    chainId: z.number().int(),
    router: ChecksummedAddress,
    token: Token,
    tokenDecimals: z.number().int().openapi({ description: "The token's decimals: `amount` / 10^tokenDecimals tokens", example: 6 }),
    split: ChecksummedAddress,
    amount: z.string().openapi({ description: "Amount to pay in the token's base units" }),
    order: z
      .object({
        orderId: z.string(),
        deviceId: Hex,
        token: Address,
        split: Address,
        amount: z.string(),
        expiry: z.string(),
      })
      .openapi({ description: "PaymentRouter.PaymentOrder, the EIP-712 message the quote signer signed" }),
    voucherSignature: Hex.openapi({ description: "The quote signer's EIP-712 signature of `order`" }),
    permit: z
      .object({
        domain: z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: Address }),
        types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
        primaryType: z.literal("Permit"),
        message: z.object({
          spender: Address,
          value: z.string(),
          deadline: z.string().openapi({
            description:
              "The order's EIP-712 digest: it binds the permit to this order. It is not a time: the router refuses the permit " +
              "once the order expired, but at the token it never expires (anyone may still submit it there, granting the router " +
              "the allowance, until another permit of the wallet's is used at the token first)",
          }),
        }),
      })
      .openapi({
        description:
          "EIP-2612 permit typed data to sign; add `owner` (the paying wallet) and `nonce` (the token's nonces(owner)) to the message. " +
          "Its deadline never expires at the token: prefer `authorization` (EIP-3009) where offered, then `permit2`, whose " +
          "signatures expire with the order; the permit is for wallets that can do neither. Absent for a token without " +
          "EIP-2612 (the local stack's USDT, as USDT on many chains): pay it through `permit2`.",
      })
      .optional(),
    relay: z
      .object({ method: z.literal("POST"), url: z.string(), body: z.string() })
      .optional()
      .openapi({ description: "Where to send the signed `permit` (present with it)" }),
    authorization: z
      .object({
        domain: z.object({ name: z.string(), version: z.string(), chainId: z.number().int(), verifyingContract: Address }),
        types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
        primaryType: z.literal("ReceiveWithAuthorization"),
        message: z.object({
          to: Address.openapi({ description: "The router: only it can use the authorization" }),
          value: z.string(),
          validAfter: z.string(),
          validBefore: z.string().openapi({ description: "The order's expiry (unix seconds): the authorization is valid before it" }),
          nonce: Hex.openapi({ description: "The order's EIP-712 digest: it binds the authorization to this order, once" }),
        }),
        relay: z.object({ method: z.literal("POST"), url: z.string(), body: z.string() }),
      })
      .optional()
      .openapi({
        description:
          "Present when the token has EIP-3009 (USDC): the ReceiveWithAuthorization typed data to sign; add `from` (the paying " +
          "wallet) to the message and POST the signature to `relay.url`. The relayer submits PaymentRouter.payWithAuthorization " +
          "and pays the gas. Tokens with only EIP-2612 have `permit` only.",
      }),
    permit2: z
      .object({
        domain: z.object({ name: z.literal("Permit2"), chainId: z.number().int(), verifyingContract: Address }),
        types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
        primaryType: z.literal("PermitWitnessTransferFrom"),
        message: z.object({
          permitted: z.object({ token: Address, amount: z.string() }),
          spender: Address.openapi({ description: "The router" }),
          nonce: z.string().openapi({ description: "The order's on-chain id: Permit2 spends it, so the signature pays once" }),
          deadline: z.string().openapi({ description: "The order's expiry (unix seconds): the signature expires with the order" }),
          witness: z.object({
            orderId: z.string(),
            deviceId: Hex,
            token: Address,
            split: Address,
            amount: z.string(),
            expiry: z.string(),
          }),
        }),
        relay: z.object({ method: z.literal("POST"), url: z.string(), body: z.string() }),
      })
      .optional()
      .openapi({
        description:
          "Present where the chain has Uniswap's Permit2: the PermitWitnessTransferFrom typed data to sign (the order as " +
          "witness); POST the signature with `owner` to `relay.url`. The wallet must have approved Permit2 for the token " +
          "once. The relayer submits PaymentRouter.payWithPermit2 and pays the gas. The only gasless rail of a token " +
          "without EIP-2612 or EIP-3009; unlike a permit, the signature expires with the order.",
      }),
    transfer: z
      .object({
        depositAddress: checksummedAddress(
          "The order's deposit address (PaymentRouter.depositAddress): only the router can move what it holds",
        ),
        uri: z.string().openapi({
          description:
            "The EIP-681 payment request: a transfer of exactly `amount` of the token to `depositAddress`, " +
            "`ethereum:<token>@<chainId>/transfer?address=<depositAddress>&uint256=<amount>`. Any wallet pays it from a " +
            "QR code with a plain ERC-20 transfer (the SDK's parsePaymentRequest reads it)",
          example:
            "ethereum:0x036CbD53842c5426634e7929541eC2318f3dCF7e@84532/transfer?address=0x5B38Da6a701c568545dCfcB03FcB875f56beddC4&uint256=500000",
        }),
        qrCodeUrl: z.string().openapi({ description: "An SVG QR code of `uri`" }),
        expiresAt: z.string().openapi({ description: "The order's expiry: the transfer must be mined before it" }),
      })
      .optional()
      .openapi({
        description:
          "Present where the router has the transfer rail: pay with a plain ERC-20 transfer of exactly `amount` to the " +
          "order's own deposit address, from any wallet, before `expiresAt`. The relayer sees the deposit and submits " +
          "PaymentRouter.payFromDeposit (paying the gas); the order turns to success with rail `transfer` and the deposit " +
          "address as payer. A transfer short of the amount pays nothing until the rest arrives; tokens sent after the " +
          "expiry, beyond the amount, or to an order paid otherwise stay at the address, and only the operator can send " +
          "them back (PaymentRouter.recoverDeposit). Send only the order's token there.",
      }),
    scanToPay: z.object({ uri: z.string(), qrCodeUrl: z.string() }),
  })
  .openapi("PaymentDetails");

export const Order = z
  .object({
    id: z.string().openapi({ example: "ord_01JD2Y6Y8X3K5V4Q9T7R2M1N0P" }),
    status: z.enum(["pending", "success", "expired"]),
    deviceId: z.string(),
    quoteId: z.string(),
    chain: z.string(),
    token: Token,
    tier: z.string(),
    durationSeconds: z.number().int(),
    amountUsd: z.number(),
    tokenAmount: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    paymentDetails: PaymentDetails.optional().openapi({ description: "Present while the order is pending" }),
    payment: z
      .object({
        rail: z.enum(paymentRouterRailValues),
        payer: ChecksummedAddress,
        transactionHash: Hex,
        blockNumber: z.number().int(),
        paidAt: z.string(),
      })
      .nullable(),
    settlement: z.object({ transactionHash: Hex }).nullable().openapi({
      description: "The 50/40/10 settlement of the payment by the device's split (same transaction); the receipt has its legs",
    }),
    device: z.object({ poweredOnAt: z.string().nullable(), sessionEndsAt: z.string().nullable() }),
    relay: z
      .object({
        status: z.enum(["queued", "sent", "mined", "reverted", "failed"]).openapi({
          description:
            "queued, then sent, then mined or reverted once its block is CONFIRMATIONS blocks deep (sent until then), or failed (it would revert); a sent transaction whose nonce another transaction of the hot wallet used is queued again, to be sent with a new nonce",
        }),
        transactionHash: Hex.nullable(),
        error: z.string().nullable().openapi({ description: "Why it reverted or failed, or, while queued again, why" }),
      })
      .nullable()
      .openapi({ description: "The relayer's own transaction for this order (relayed permit or cash), if any" }),
  })
  .openapi("Order", { example: ORDER_EXAMPLE });

/** Bytes 65 (r, s, v) to 8,192 long: a wallet's ECDSA signature, or a smart-contract account's (a multisig's,
 * a passkey wallet's WebAuthn data, an ERC-6492 wrapper with the account's factory call), bounded. */
const WalletSignature = Hex.refine(
  (s) => s.length % 2 === 0 && s.length >= 132 && s.length <= 2 + 2 * 8_192,
  "a signature of 65 to 8,192 bytes",
);

export const PermitSubmission = z
  .object({
    owner: Address.openapi({ description: "The paying wallet (the permit's owner)" }),
    signature: WalletSignature.openapi({
      description:
        "The owner's EIP-712 signature of the permit in paymentDetails.permit: 65 bytes from a wallet without code, " +
        "or a smart-contract account's ERC-1271 signature of any length (ERC-6492-wrapped if not deployed yet); the " +
        "permit's `bytes` overload must exist at the token for any other length than 65 (USDC has it)",
    }),
  })
  .strict()
  .openapi("PermitSubmission", { example: PERMIT_SUBMISSION_EXAMPLE });

export const Permit2Submission = z
  .object({
    owner: Address.openapi({ description: "The paying wallet (the Permit2 transfer's owner)" }),
    signature: WalletSignature.openapi({
      description:
        "The owner's EIP-712 signature of paymentDetails.permit2: 65 bytes from a wallet without code, or a " +
        "smart-contract account's ERC-1271 signature (Permit2 asks the account)",
    }),
  })
  .strict()
  .openapi("Permit2Submission", { example: PERMIT2_SUBMISSION_EXAMPLE });

export const AuthorizationSubmission = z
  .object({
    from: Address.openapi({ description: "The paying wallet (the authorization's `from`)" }),
    signature: WalletSignature.openapi({
      description:
        "The wallet's EIP-712 signature of the authorization in paymentDetails.authorization: 65 bytes from a wallet " +
        "without code, or a smart-contract account's ERC-1271 signature of any length (ERC-6492-wrapped if not " +
        "deployed yet)",
    }),
  })
  .strict()
  .openapi("AuthorizationSubmission", { example: AUTHORIZATION_SUBMISSION_EXAMPLE });

export const RelayAccepted = z
  .object({
    orderId: z.string(),
    status: z.enum(["queued", "sent", "mined", "reverted", "failed"]),
    transactionHash: Hex.nullable(),
  })
  .openapi("RelayAccepted", { example: RELAY_ACCEPTED_EXAMPLE });

export const CancellationAccepted = z
  .object({
    orderId: z.string(),
    status: z.enum(["queued", "sent", "mined", "reverted", "failed"]).openapi({
      description: "The cancelOrder transaction's state (mined: the voucher is void and the order expired)",
    }),
    transactionHash: Hex.nullable(),
  })
  .openapi("CancellationAccepted", { example: CANCELLATION_ACCEPTED_EXAMPLE });

export const Receipt = z
  .object({
    orderId: z.string(),
    deviceId: z.string(),
    tier: z.string(),
    amountUsd: z.number(),
    token: Token,
    tokenAmount: z.string(),
    chain: z.string(),
    chainId: z.number().int(),
    payment: z.object({
      rail: z.enum(paymentRouterRailValues),
      payer: ChecksummedAddress,
      transactionHash: Hex,
      blockNumber: z.number().int(),
      paidAt: z.string(),
    }),
    settlement: z
      .object({
        ref: Hex,
        split: ChecksummedAddress,
        gross: z.string(),
        legs: z.array(z.object({ leg: SplitLeg, recipient: ChecksummedAddress, amount: z.string() })),
        transactionHash: Hex,
      })
      .nullable()
      .openapi({
        description:
          "The payment's settlement by the device's split contract (`split`), as indexed: the on-chain reference, the gross and " +
          "the 50/40/10 legs; null until the indexer has it",
      }),
    device: z.object({
      poweredOnAt: z.string().nullable(),
      sessionEndsAt: z.string().nullable(),
      energyWh: z.number().int().nullable(),
    }),
  })
  .openapi("Receipt", { example: RECEIPT_EXAMPLE });

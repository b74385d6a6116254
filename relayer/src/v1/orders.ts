// POST /v1/orders, GET /v1/orders/{id}, and the relayer's rails: POST /v1/orders/{id}/permit (a wallet's
// permit, relayed with the relayer's gas) and POST /v1/orders/{id}/cash (an agent confirms cash); POST
// /v1/orders/{id}/cancel (the tenant voids an unpaid order's voucher on-chain).
import { createRoute } from "@hono/zod-openapi";
import { requireApiKey } from "../auth/middleware.ts";
import { createApi } from "../http/api.ts";
import { errorResponses } from "../http/errors.ts";
import { ServiceError, errors } from "../errors.ts";
import { rateLimit } from "../http/middleware.ts";
import { createOrder, findOrder, findOrderWithRelay, orderView } from "../payments/orders.ts";
import { orderReceipt } from "../payments/receipt.ts";
import { cancelOrder } from "../payments/cancellation.ts";
import { releaseCash, reserveCash } from "../payments/cash-limits.ts";
import { relayAuthorization, relayCash, relayPermit, relayPermit2 } from "../payments/relay.ts";
import type { Identity } from "../http/env.ts";
import type { Services } from "../services.ts";
import {
  AuthorizationSubmission,
  Permit2Submission,
  CancellationAccepted,
  Order,
  OrderRequest,
  PermitSubmission,
  Receipt,
  RelayAccepted,
} from "./orders.schemas.ts";
import { OrderIdParam } from "./shared-schemas.ts";

/** What the wallet rails refuse so that the relayer's hot wallet pays only for transactions that succeed. */
/** The 409 codes of every relayed rail (permit, authorization, Permit2): the order's state, or a payment under way. */
const RELAY_CONFLICTS = [
  "order_already_paid",
  "order_expired",
  "order_expiring",
  "order_cancelled",
  "payment_in_progress",
  "payer_payment_in_progress",
] as const;

const RELAY_REFUSALS =
  "The relayer pays the gas only for what will succeed: 409 `order_expiring` when the order's voucher expires " +
  "before the chain's block RELAY_EXPIRY_MARGIN_BLOCKS blocks after the next one (chain time: pay from the " +
  "wallet, or order again); 409 `payer_payment_in_progress` while another relayed payment by the same wallet " +
  "is queued or under way (its permit nonce and balance are in use: sign again once it is mined); 409 " +
  "`order_cancelled` when a cancellation is queued; 429 `too_many_reverts` (Retry-After) once the wallet's " +
  "relayed payments reverted RELAY_PAYER_MAX_REVERTS times, or the tenant's order transactions " +
  "RELAY_TENANT_MAX_REVERTS times, in RELAY_REVERT_WINDOW_SECONDS.";

export function orderRoutes(services: Services) {
  const api = createApi();
  const {
    database: { db },
  } = services;
  /** Cancellations send transactions from the hot wallet: limited per tenant (after requireApiKey). */
  const tenantChainWrites = rateLimit({
    capacity: services.config.TENANT_CHAIN_WRITES_PER_MINUTE,
    perSecond: services.config.TENANT_CHAIN_WRITES_PER_MINUTE / 60,
    key: (c) => `tenant:${c.get("identity").tenantId}`,
  });

  /** The order `id` of the API key's tenant: another tenant's order is as unknown to the key as an order that
   * does not exist (404). */
  async function keyHoldersOrder(identity: Identity, id: string) {
    if (identity.kind !== "api_key") throw errors.unauthorized();
    const order = await findOrder(services, id);
    if (order.tenantId !== identity.tenantId) throw errors.notFound(`order ${order.id}`);
    return { order, keyId: identity.keyId };
  }

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders",
      operationId: "createOrder",
      tags: ["Payments"],
      summary: "Create an order from a quote (201); the same request again returns the same order (200)",
      middleware: [rateLimit({ capacity: 60, perSecond: 20 })] as const,
      request: { body: { content: { "application/json": { schema: OrderRequest } }, required: true } },
      responses: {
        200: { description: "The order this quote already made", content: { "application/json": { schema: Order } } },
        201: { description: "The new order, with its payment details", content: { "application/json": { schema: Order } } },
        ...errorResponses(400, 404, { 409: ["quote_expired", "split_not_ready", "split_recipients_mismatch"] }, 422, 429, 503),
      },
    }),
    async (c) => {
      const { order, created } = await createOrder(services, c.req.valid("json"));
      if (created) c.header("location", `/v1/orders/${order.id}`);
      return c.json(await orderView(services, order), created ? 201 : 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/orders/{id}",
      operationId: "getOrder",
      tags: ["Payments"],
      summary: "Order status: pending, success or expired (poll every few seconds as a fallback to webhooks)",
      request: { params: OrderIdParam },
      responses: {
        200: { description: "The order", content: { "application/json": { schema: Order } } },
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const { order, relay } = await findOrderWithRelay(services, c.req.valid("param").id);
      return c.json(await orderView(services, order, relay), 200);
    },
  );

  api.openapi(
    createRoute({
      method: "get",
      path: "/orders/{id}/receipt",
      operationId: "getOrderReceipt",
      tags: ["Payments"],
      summary: "Proof of payment: the paid order with its on-chain payment and 50/40/10 split (409 while unpaid)",
      request: { params: OrderIdParam },
      responses: {
        200: { description: "The receipt", content: { "application/json": { schema: Receipt } } },
        ...errorResponses(404, { 409: ["order_unpaid"] }, 503),
      },
    }),
    async (c) => c.json(await orderReceipt(services, await findOrder(services, c.req.valid("param").id)), 200),
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders/{id}/permit",
      operationId: "relayPermit",
      tags: ["Payments"],
      summary: "Relay a wallet's EIP-2612 permit: the relayer submits payWithPermit and pays the gas",
      description:
        "The permit is checked off-chain (signature, balance) and the payment simulated before it is queued. " +
        "One transaction per order: repeating the request returns the transaction under way. Follow the order's " +
        "event stream or webhooks for the result. " +
        RELAY_REFUSALS,
      middleware: [rateLimit({ capacity: 30, perSecond: 5 })] as const,
      request: {
        params: OrderIdParam,
        body: { content: { "application/json": { schema: PermitSubmission } }, required: true },
      },
      responses: {
        202: { description: "Queued or under way", content: { "application/json": { schema: RelayAccepted } } },
        ...errorResponses(400, 404, { 409: RELAY_CONFLICTS }, 422, { 429: ["rate_limited", "too_many_reverts"] }, 503),
      },
    }),
    async (c) => {
      const order = await findOrder(services, c.req.valid("param").id);
      return c.json(await relayPermit(services, order, c.req.valid("json")), 202);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders/{id}/authorization",
      operationId: "relayAuthorization",
      tags: ["Payments"],
      summary: "Relay a wallet's EIP-3009 receive authorization (USDC): the relayer submits payWithAuthorization and pays the gas",
      description:
        "Offered when paymentDetails has `authorization` (the token has EIP-3009). The signature is checked off-chain " +
        "(signer, unused nonce, balance) and the payment simulated before it is queued. The authorization pays this " +
        "order only (its nonce is the order's digest), once, before the order's expiry; only the router can use it. " +
        "One transaction per order: repeating the request returns the transaction under way. " +
        RELAY_REFUSALS,
      middleware: [rateLimit({ capacity: 30, perSecond: 5 })] as const,
      request: {
        params: OrderIdParam,
        body: { content: { "application/json": { schema: AuthorizationSubmission } }, required: true },
      },
      responses: {
        202: { description: "Queued or under way", content: { "application/json": { schema: RelayAccepted } } },
        ...errorResponses(
          400,
          404,
          {
            409: [...RELAY_CONFLICTS, "authorization_used"],
          },
          422,
          { 429: ["rate_limited", "too_many_reverts"] },
          503,
        ),
      },
    }),
    async (c) => {
      const order = await findOrder(services, c.req.valid("param").id);
      return c.json(await relayAuthorization(services, order, c.req.valid("json")), 202);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders/{id}/permit2",
      operationId: "relayPermit2",
      tags: ["Payments"],
      summary: "Relay a wallet's Permit2 signature: the relayer submits payWithPermit2 and pays the gas",
      description:
        "Offered when paymentDetails has `permit2` (the chain has Uniswap's Permit2). The signature is checked " +
        "off-chain (signer, balance, the wallet's approval of Permit2) and the payment simulated before it is queued. " +
        "It pays this order only (the order is its witness and its id the Permit2 nonce), once, before the order's " +
        "expiry; only the router can use it. One transaction per order: repeating the request returns the " +
        "transaction under way. " +
        RELAY_REFUSALS,
      middleware: [rateLimit({ capacity: 30, perSecond: 5 })] as const,
      request: {
        params: OrderIdParam,
        body: { content: { "application/json": { schema: Permit2Submission } }, required: true },
      },
      responses: {
        202: { description: "Queued or under way", content: { "application/json": { schema: RelayAccepted } } },
        ...errorResponses(400, 404, { 409: RELAY_CONFLICTS }, 422, { 429: ["rate_limited", "too_many_reverts"] }, 503),
      },
    }),
    async (c) => {
      const order = await findOrder(services, c.req.valid("param").id);
      return c.json(await relayPermit2(services, order, c.req.valid("json")), 202);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders/{id}/cash",
      operationId: "confirmCashPayment",
      tags: ["Payments"],
      summary: "Confirm a cash payment (agent API key): the relayer pays the order from its float",
      description:
        "Which agent key confirmed the payment is recorded in the service's log, never in the order's public " +
        "views (its event stream shows `payment.submitted` with `rail: cash` only). The relayer pays from its own " +
        "float, so the rail is capped: one agent key may confirm at most CASH_DAILY_LIMIT_USD_PER_KEY (200 USD by " +
        "default) and all of a tenant's agent keys together CASH_DAILY_LIMIT_USD_PER_TENANT (1,000 USD) in any 24 " +
        "hours; a confirmation that would go over is 422 `cash_limit_exceeded`, naming the limit in its message and " +
        "in `details[0].path`. Each order counts once (repeating the request counts nothing more). After a change " +
        "of the device's payout parties, its orders are refused on this rail for PAYOUT_CHANGE_DELAY_SECONDS (24 " +
        "hours by default): 409 `payout_change_pending` with `Retry-After`.",
      security: [{ apiKey: ["agent"] }],
      middleware: [requireApiKey(db, ["agent"])] as const,
      request: { params: OrderIdParam },
      responses: {
        202: { description: "Queued or under way", content: { "application/json": { schema: RelayAccepted } } },
        ...errorResponses(
          401,
          403,
          404,
          {
            409: [
              "order_already_paid",
              "order_expired",
              "order_expiring",
              "order_cancelled",
              "payment_in_progress",
              "payout_change_pending",
            ],
          },
          { 422: ["invalid_parameters", "cash_limit_exceeded"], 429: ["too_many_reverts"] },
          503,
        ),
      },
    }),
    async (c) => {
      const { order, keyId } = await keyHoldersOrder(c.get("identity"), c.req.valid("param").id);
      const logger = c.get("logger");
      const reserved = await reserveCash(services, order, keyId).catch((error: unknown) => {
        if (error instanceof ServiceError) logger.warn("cash payment refused", { orderId: order.id, keyId, code: error.code });
        throw error;
      });
      const accepted = await relayCash(services, order).catch(async (error: unknown) => {
        // Refused after all (a conflict, a payment that would revert): it does not count against the limits.
        if (reserved) {
          await releaseCash(services, order).catch((failure: unknown) =>
            logger.warn("cannot take back a refused cash confirmation", { orderId: order.id, error: (failure as Error).message }),
          );
        }
        throw error;
      });
      logger.info("cash payment confirmed", { orderId: order.id, keyId, relayStatus: accepted.status });
      return c.json(accepted, 202);
    },
  );

  api.openapi(
    createRoute({
      method: "post",
      path: "/orders/{id}/cancel",
      operationId: "cancelOrder",
      tags: ["Payments"],
      summary: "Cancel an unpaid order (developer API key): its voucher is voided on-chain",
      description:
        "The relayer sends PaymentRouter.cancelOrder for the order. The order stays `pending` until that " +
        "transaction is mined, then becomes `expired` (`order.expired` and the `payment.expired` webhook with " +
        "`reason: cancelled`); meanwhile the relayer relays no payment for it (409 `order_cancelled`). A payment " +
        "someone else had mined first wins: the order becomes `success` as usual. Repeating the request returns " +
        "the cancellation under way. 409 `order_already_paid`, `order_expired` (nothing to cancel: an expired " +
        "voucher pays on no rail) or `payment_in_progress` (the relayer is submitting a payment for it; a " +
        "payment and a cancellation asked for at the same moment are ordered on the order's row: the second " +
        "gets this 409 or `order_cancelled`). Each cancellation is a transaction from the relayer's hot wallet: " +
        "a tenant may ask for TENANT_CHAIN_WRITES_PER_MINUTE a minute (a burst of as many) per relayer process, " +
        "beyond that 429 `rate_limited` with Retry-After; and 429 `too_many_reverts` once the tenant's order " +
        "transactions reverted RELAY_TENANT_MAX_REVERTS times in RELAY_REVERT_WINDOW_SECONDS.",
      security: [{ apiKey: ["developer"] }],
      middleware: [requireApiKey(db, ["developer"]), tenantChainWrites] as const,
      request: { params: OrderIdParam },
      responses: {
        202: { description: "The cancellation, queued or under way", content: { "application/json": { schema: CancellationAccepted } } },
        ...errorResponses(
          401,
          403,
          404,
          { 409: ["order_already_paid", "order_expired", "payment_in_progress"], 429: ["rate_limited", "too_many_reverts"] },
          503,
        ),
      },
    }),
    async (c) => {
      const { order, keyId } = await keyHoldersOrder(c.get("identity"), c.req.valid("param").id);
      const cancellation = await cancelOrder(services, order);
      c.get("logger").info("order cancellation requested", { orderId: order.id, keyId, status: cancellation.status });
      return c.json(cancellation, 202);
    },
  );

  return api;
}

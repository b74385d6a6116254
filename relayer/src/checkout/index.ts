// Scan-to-pay: the order's checkout page at /pay/{orderId} (the URI of paymentDetails.scanToPay, also served
// as a QR code at /pay/{orderId}/qr.svg). The page shows the amount, the device and the expiry; a browser
// wallet (EIP-1193) signs the order's permit there (checkout.js, hand-written, no library) and the page
// posts it to POST /v1/orders/{id}/permit. Beside it, where the router has the transfer rail, the order's
// EIP-681 payment request (paymentDetails.transfer) as a QR code at /pay/{orderId}/transfer.svg, with the
// deposit address and the exact amount: any phone wallet pays it with a plain transfer. Either way the page
// follows GET /v1/orders/{id}/events to success, whatever rail paid.
import path from "node:path";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import QRCode from "qrcode";
import { devices, orders } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import { PAGE_HEADERS, staticAssets } from "../portal/assets.ts";
import { transferRequest, voucherOf } from "../payments/orders.ts";
import type { Services } from "../services.ts";
import { checkoutPage, missingPage } from "./page.ts";

const ORDER_ID = /^ord_[0-9A-Z]{26}$/;

export function checkoutPages(services: Services) {
  const app = new Hono<AppEnv>();
  const {
    database: { db },
    config,
  } = services;
  const assets = staticAssets(path.join(import.meta.dirname, "assets"), [
    "checkout.css",
    "checkout.js",
    ["logo.svg", "../../portal/assets/logo.svg"],
  ]);
  // Its files under /checkout/assets, not /pay/assets: a static segment beside /pay/:id would make Hono fall
  // back from its RegExpRouter to a slower router for every route.
  app.route("/checkout/assets", assets.app);
  const version = assets.version;

  async function load(id: string) {
    if (!ORDER_ID.test(id)) return undefined;
    const [order] = await db.select().from(orders).where(eq(orders.id, id));
    if (!order) return undefined;
    const [device] = await db.select().from(devices).where(eq(devices.id, order.deviceId));
    return { order, device };
  }

  /** The order's token, as the chain described it (undefined when the chain cannot be reached). */
  async function tokenOf(order: { token: string }) {
    const tokens = await services.chain.stablecoins().catch(() => undefined);
    return tokens ? [...tokens.values()].find((t) => t.symbol === order.token) : undefined;
  }

  async function qrCode(text: string) {
    const svg = await QRCode.toString(text, {
      type: "svg",
      margin: 2,
      errorCorrectionLevel: "M",
      color: { dark: "#0b1f24ff", light: "#ffffffff" },
    });
    return new Response(svg, {
      status: 200,
      headers: {
        "content-type": "image/svg+xml",
        "cache-control": "public, max-age=86400, immutable",
        "x-content-type-options": "nosniff",
      },
    });
  }

  app.get("/pay/:id/qr.svg", async (c) => {
    const found = await load(c.req.param("id"));
    if (!found) return c.text("no such order", 404);
    return qrCode(`${config.publicBaseUrl}/pay/${found.order.id}`);
  });

  app.get("/pay/:id/transfer.svg", async (c) => {
    const found = await load(c.req.param("id"));
    if (!found) return c.text("no such order", 404);
    const token = await tokenOf(found.order);
    if (!token) return c.text("the chain cannot be reached; try again shortly", 503);
    if (!token.transfer) return c.text("this order has no transfer payment request", 404);
    const request = transferRequest(found.order, services.chain.depositAddress(voucherOf(found.order)), config.publicBaseUrl);
    return qrCode(request.uri);
  });

  app.get("/pay/:id", async (c) => {
    const found = await load(c.req.param("id"));
    if (!found) return c.html(missingPage({ version }), 404, PAGE_HEADERS);
    const token = await tokenOf(found.order);
    return c.html(
      checkoutPage({
        order: found.order,
        device: found.device,
        tokenDecimals: token?.decimals,
        // A token without EIP-2612 or EIP-3009 is paid through Permit2, which the wallet approves once (a transaction).
        approvesPermit2: token !== undefined && token.domain === null,
        uri: `${config.publicBaseUrl}/pay/${found.order.id}`,
        transfer: token?.transfer
          ? transferRequest(found.order, services.chain.depositAddress(voucherOf(found.order)), config.publicBaseUrl)
          : undefined,
        version,
      }),
      200,
      PAGE_HEADERS,
    );
  });

  return app;
}

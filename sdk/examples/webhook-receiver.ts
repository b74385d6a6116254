// An example webhook receiver: node:http only, verifies every delivery with the SDK's verifier, answers at
// once, deduplicates by id and processes after answering. Run it with
//   WEBHOOK_SECRET=whsec_... PORT=8080 node sdk/examples/webhook-receiver.ts
// and subscribe its URL (https in production: put it behind your TLS proxy).
import http from "node:http";
// In your project: import { ... } from "@payg/sdk" (here the package's source, so it runs without a build).
import { WebhookConfigError, WebhookVerificationError, createWebhookVerifier } from "../src/index.ts";

// The secret is checked here, at start-up: an empty, short or mangled one stops the receiver with a clear
// message instead of failing (or, worse, passing) every delivery later.
function verifierFromEnvironment() {
  try {
    return createWebhookVerifier({ secret: process.env.WEBHOOK_SECRET ?? "" });
  } catch (error) {
    if (!(error instanceof WebhookConfigError)) throw error;
    console.error(`WEBHOOK_SECRET: ${error.message}. Set it to the endpoint's signing secret (whsec_...) as the subscription showed it.`);
    process.exit(1);
  }
}
const verify = verifierFromEnvironment();

/** Ids already handled. Use your database (a unique key on the id) in production, kept longer than the
 * retry window (about 3 hours). */
const seen = new Set<string>();

const server = http.createServer(async (req, res) => {
  if (req.method !== "POST") return void res.writeHead(405).end();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks); // the raw bytes: never re-serialise before verifying
  let event;
  try {
    event = verify(body, req.headers);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return void res.writeHead(400).end(error.reason);
    throw error;
  }
  res.writeHead(204).end(); // acknowledge first: anything slow happens after the answer
  if (seen.has(event.id)) return; // a retry of a delivery already handled
  seen.add(event.id);
  switch (event.type) {
    case "payment.confirmed":
      console.log(`order ${String(event.data.orderId)} is paid (${String(event.data.rail)})`);
      break;
    case "ticket.created":
      console.log(`ticket on ${String(event.data.deviceId)}: ${String(event.data.message)}`);
      break;
    default:
      console.log(`${event.type} ${event.id}`);
  }
});

server.listen(Number(process.env.PORT ?? 8080), () => console.log("listening"));

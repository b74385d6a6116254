// A webhook receiver for the tests: a real HTTP server on 127.0.0.1 that records every delivery, verifies
// both signatures of each with sdk/src/webhooks.ts (the helper integrators use), and answers as each endpoint
// (a path) is told to: a status, a status per attempt, or no answer at all.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type WebhookEnvelope, verifyWebhook } from "../../sdk/src/webhooks.ts";

export type Delivery = {
  path: string;
  /** Arrival order at this path, from 1. */
  n: number;
  headers: http.IncomingHttpHeaders;
  /** The raw body, as received. */
  body: Buffer;
  envelope?: WebhookEnvelope;
  /** Whether webhook-signature (Standard Webhooks, with the timestamp tolerance) verified. */
  standardOk: boolean;
  /** Whether x-service-signature verified. */
  serviceOk: boolean;
  verifyError?: string;
  receivedAt: number;
  /** What the receiver answered (null: no answer). */
  answered: number | null;
};

/** What an endpoint answers: a status, or "hang" (never answer; the socket stays open). */
export type Answer = number | "hang";
export type Responder = (delivery: Delivery, previous: Delivery[]) => Answer | Promise<Answer>;

export type WebhookReceiver = {
  port: number;
  url(path: string): string;
  /** The signing secret deliveries to `path` are verified with. */
  setSecret(path: string, secret: string): void;
  respond(path: string, responder: Responder): void;
  deliveries(path?: string): Delivery[];
  /** Resolves with the first delivery (already received or coming) that `match` accepts. */
  waitFor(match: (d: Delivery) => boolean, timeoutMs?: number, what?: string): Promise<Delivery>;
  /** Answers every hanging request with `status` (e.g. after a relayer was killed). */
  releaseHanging(status?: number): void;
  close(): Promise<void>;
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<string, string>();
  const responders = new Map<string, Responder>();
  const received: Delivery[] = [];
  /** The same deliveries by path: a suite's receiver sees thousands, and each is numbered within its path. */
  const byPath = new Map<string, Delivery[]>();
  /** Pending waitFor calls: each is shown every new delivery once (those before it were checked when it began). */
  const waiters = new Set<(delivery: Delivery) => void>();
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = (req.url ?? "/").split("?")[0];
    const secret = secrets.get(path);
    let samePath = byPath.get(path);
    if (!samePath) byPath.set(path, (samePath = []));
    const delivery: Delivery = {
      path,
      n: samePath.length + 1,
      headers: req.headers,
      body,
      standardOk: false,
      serviceOk: false,
      receivedAt: Date.now(),
      answered: null,
    };
    if (secret) {
      try {
        delivery.envelope = verifyWebhook({ secret, body, headers: req.headers });
        delivery.standardOk = true;
      } catch (error) {
        delivery.verifyError = (error as Error).message;
      }
      try {
        verifyWebhook({ secret, body, headers: req.headers, scheme: "service" });
        delivery.serviceOk = true;
      } catch (error) {
        delivery.verifyError ??= (error as Error).message;
      }
    }
    delivery.envelope ??= (() => {
      try {
        return JSON.parse(body.toString("utf8")) as WebhookEnvelope;
      } catch {
        return undefined;
      }
    })();
    const previous = samePath.slice();
    samePath.push(delivery);
    received.push(delivery);
    for (const wake of waiters) wake(delivery);
    const responder = responders.get(path) ?? (() => 200);
    const answer = await responder(delivery, previous);
    if (answer === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    delivery.answered = answer;
    res.writeHead(answer, { "content-type": "application/json" });
    res.end(JSON.stringify({ received: delivery.envelope?.id ?? null }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    setSecret: (path, secret) => secrets.set(path, secret),
    respond: (path, responder) => responders.set(path, responder),
    deliveries: (path) => (path ? [...(byPath.get(path) ?? [])] : [...received]),
    waitFor(match, timeoutMs = 20_000, what = "a webhook delivery") {
      return new Promise((resolve, reject) => {
        const found = (delivery: Delivery) => {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(delivery);
        };
        const check = (delivery: Delivery) => {
          if (match(delivery)) found(delivery);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = received.map((d) => `${d.path} ${d.envelope?.type ?? "?"} ${d.envelope?.id ?? "?"}`).join("\n  ");
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received:\n  ${seen}`));
        }, timeoutMs);
        const already = received.find(match);
        if (already) found(already);
        else waiters.add(check);
      });
    },
    releaseHanging(status = 200) {
      for (const res of hanging) {
        if (!res.destroyed) {
          res.writeHead(status);
          res.end();
        }
      }
      hanging.clear();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

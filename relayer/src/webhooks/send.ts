// One delivery attempt over HTTP: a POST of exactly the signed bytes, through a connection whose address
// was checked (url-safety.ts: the URL's form, then guardedLookup for a name or checkAddresses for an IP
// literal, the allowlist and the relayer's own endpoints included), with one deadline over the whole
// attempt (checks, DNS, connect, TLS, request, response head), no redirects followed and a fresh
// connection every time.
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Resolver } from "./bounded-resolver.ts";
import { UnsafeUrlError, type UrlPolicy, checkAddresses, guardedLookup, isAllowlisted, parseCallbackUrl } from "./url-safety.ts";

export type AttemptResult = {
  /** The HTTP status the endpoint answered; null when there was no answer. */
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed without a status (timeout, refused URL, connection error). */
  error: string | null;
  /** The first bytes of the answer's body. */
  responseExcerpt: string | null;
};

const EXCERPT_BYTES = 512;
export const USER_AGENT = "payg-webhooks/1.0 (+https://www.standardwebhooks.com)";

export async function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; policy: UrlPolicy; resolver?: Resolver },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = parseCallbackUrl(rawUrl, opts.policy);
  } catch (error) {
    return { statusCode: null, durationMs: elapsed(), error: `refused: ${(error as Error).message}`, responseExcerpt: null };
  }
  const payload = Buffer.from(body, "utf8");
  const client = url.protocol === "https:" ? https : http;
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    const finish = (result: Omit<AttemptResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, durationMs: elapsed() });
    };
    const fail = (error: Error) => {
      const code = (error as NodeJS.ErrnoException).code;
      const message = error instanceof UnsafeUrlError ? `refused: ${error.message}` : code ? `${code}: ${error.message}` : error.message;
      finish({ statusCode: null, error: message, responseExcerpt: null });
    };
    const deadline = setTimeout(() => {
      const error = new Error(`timed out after ${opts.timeoutMs} ms`);
      if (request) request.destroy(error);
      else fail(error);
    }, opts.timeoutMs);
    // An IP literal is connected to without a lookup: its address is checked here (own endpoints may be
    // names, so this can resolve them).
    const literalChecked = net.isIP(host)
      ? checkAddresses(host, [{ address: host, family: net.isIP(host) }], port, isAllowlisted(url, opts.policy), opts.policy, opts.resolver)
      : Promise.resolve();
    literalChecked.then(() => {
      if (settled) return;
      request = client.request({
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(payload.length), "user-agent": USER_AGENT, connection: "close" },
        agent: false,
        lookup: net.isIP(host) ? undefined : guardedLookup(url, opts.policy, opts.resolver),
        servername: net.isIP(host) ? undefined : host,
      });
      request.on("response", (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8");
          finish({ statusCode: response.statusCode ?? null, error: null, responseExcerpt: excerpt || null });
          response.destroy();
        };
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) done();
        });
        response.on("end", done);
        response.on("error", done);
        response.on("close", done);
      });
      request.on("error", fail);
      request.end(payload);
    }, fail);
  });
}

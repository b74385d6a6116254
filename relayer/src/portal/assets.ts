// Static files of the portal and the checkout page (CSS, hand-written JS), served by the relayer itself:
// no CDN. Read once at start-up; only the files listed are served.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Hono } from "hono";

const types: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** Routes GET /<file> for each of the `files` of `dir` (a file may be given as [name, path relative to dir]);
 * `version(file)` gives a content hash for cache busting. */
export function staticAssets(dir: string, files: Array<string | [string, string]>) {
  const loaded = new Map(
    files.map((entry) => {
      const [file, relative] = typeof entry === "string" ? [entry, entry] : entry;
      const body = readFileSync(path.join(dir, relative));
      return [
        file,
        {
          body,
          type: types[path.extname(file)] ?? "application/octet-stream",
          etag: `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"`,
        },
      ];
    }),
  );
  const app = new Hono();
  // One static route per file rather than GET /:file: a parameter here, beside the parameters of the pages
  // mounted next to it (/pay/:id), would make Hono fall back from its RegExpRouter to a slower router.
  for (const [file, asset] of loaded) {
    app.get(`/${file}`, (c) => {
      if (c.req.header("if-none-match") === asset.etag) return c.body(null, 304);
      return c.body(new Uint8Array(asset.body), 200, {
        "content-type": asset.type,
        "cache-control": "public, max-age=300",
        etag: asset.etag,
        "x-content-type-options": "nosniff",
      });
    });
  }
  return {
    app,
    version: (file: string) => loaded.get(file)?.etag.slice(1, 9) ?? "0",
  };
}

/** Security headers of every portal and checkout page. */
export const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
} as const;

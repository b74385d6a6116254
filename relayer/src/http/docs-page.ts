// An API reference page that works offline: Swagger UI's files are served from the npm package
// swagger-ui-dist, never from a CDN. The page runs no inline script (Swagger UI is started by
// assets/reference.js, which reads the document's URL from the page) and sends a Content-Security-Policy
// that allows only its own files and forbids framing it (frame-ancestors 'none', X-Frame-Options DENY).
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Hono } from "hono";

const require = createRequire(import.meta.url);
const assetsDir = path.dirname(require.resolve("swagger-ui-dist/package.json"));
/** The files served, by name (a Map: the name comes from the request path, and a plain object would also
 * answer for `constructor` or `__proto__`). */
const assets = new Map<string, string>([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["swagger-ui-standalone-preset.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"],
]);

/** Starts Swagger UI on the page's `#reference` element, for the OpenAPI document named by its
 * `data-spec-url`. */
const REFERENCE_SCRIPT = `"use strict";
window.ui = SwaggerUIBundle({
  url: document.getElementById("reference").dataset.specUrl,
  dom_id: "#reference",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "BaseLayout",
});
`;

/** Security headers of the reference page: its own scripts and styles only (Swagger UI sets styles from
 * script, which a policy allows), icons also as data: URLs, the document fetched from this origin. */
export const DOCS_PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
} as const;

const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** Routes `/` (the page) and `/assets/*` for the OpenAPI document at `specUrl`. */
export function docsPage(title: string, specUrl: string) {
  const app = new Hono();
  app.get("/", (c) => {
    for (const [name, value] of Object.entries(DOCS_PAGE_HEADERS)) c.header(name, value);
    const base = c.req.path.endsWith("/") ? c.req.path : `${c.req.path}/`;
    return c.html(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="${base}assets/favicon-32x32.png">
<link rel="stylesheet" href="${base}assets/swagger-ui.css">
</head>
<body>
<div id="reference" data-spec-url="${escapeAttribute(specUrl)}"></div>
<script src="${base}assets/swagger-ui-bundle.js"></script>
<script src="${base}assets/swagger-ui-standalone-preset.js"></script>
<script src="${base}assets/reference.js"></script>
</body>
</html>`);
  });
  app.get("/assets/:file", async (c) => {
    const file = c.req.param("file");
    if (file === "reference.js") {
      return c.body(REFERENCE_SCRIPT, 200, {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": "public, max-age=300",
        "x-content-type-options": "nosniff",
      });
    }
    const type = assets.get(file);
    if (!type) return c.notFound();
    const body = await readFile(path.join(assetsDir, file));
    return c.body(body, 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
  return app;
}

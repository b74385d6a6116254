// An API reference page that works offline: Swagger UI's files are served from the npm package
// swagger-ui-dist, never from a CDN.
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

/** Routes `/` (the page) and `/assets/*` for the OpenAPI document at `specUrl`. */
export function docsPage(title: string, specUrl: string) {
  const app = new Hono();
  app.get("/", (c) => {
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
<div id="reference"></div>
<script src="${base}assets/swagger-ui-bundle.js"></script>
<script src="${base}assets/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: "#reference",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "BaseLayout",
});
</script>
</body>
</html>`);
  });
  app.get("/assets/:file", async (c) => {
    const file = c.req.param("file");
    const type = assets.get(file);
    if (!type) return c.notFound();
    const body = await readFile(path.join(assetsDir, file));
    return c.body(body, 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
  return app;
}

// Parsed JSON as a test reads it: a response body, an OpenAPI document, a webhook's payload. The test's
// assertions check its shape at run time; a static type would only repeat them. The one `any` of the
// repository (eslint.config.js allows it in this file alone, and says why).

/** A value from JSON.parse (or Response.json()) that a test reads without declaring its shape first. */
export type UncheckedJson = any;

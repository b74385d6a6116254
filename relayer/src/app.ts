// The relayer's HTTP surface: the payment service under /v1 and the energy cash-flow sandbox under
// /energy/v1, each with its own error envelope, plus the portal and checkout pages.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { energyApi, energyDocs } from "./energy/api.ts";
import { errorBody, toErrorResponse } from "./http/errors.ts";
import type { AppEnv } from "./http/env.ts";
import { requestContext } from "./http/middleware.ts";
import { checkoutPages } from "./checkout/index.ts";
import { paymentsApi } from "./payments/api.ts";
import { portalPages } from "./portal/index.ts";
import type { Services } from "./services.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export function createApp(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("*", requestContext(services.logger));
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      // The rest of the body is not read: close the connection so the client does not reuse it.
      onError: (c) =>
        c.json(errorBody(c, "body_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`), 413, { connection: "close" }),
    }),
  );
  app.route("/v1", paymentsApi(services));
  app.route("/portal", portalPages(services, (request, env) => app.fetch(request, env)));
  app.route("/pay", checkoutPages(services));
  app.get("/", (c) => c.redirect("/v1/docs"));
  const energy = energyApi(services);
  app.route("/energy/v1", energy);
  app.route("/energy", energyDocs(energy, services));

  app.notFound((c) => c.json(errorBody(c, "not_found", `no route ${c.req.method} ${c.req.path}`), 404));
  app.onError((error, c) => toErrorResponse(c, error));
  return app;
}

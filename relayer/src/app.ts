// The relayer's HTTP surface: the payment service under /v1 and the energy cash-flow sandbox under
// /energy/v1, each with its own error envelope, plus the portal and checkout pages and the Prometheus
// metrics at /metrics (every request is timed, by route template).
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { energyApi, energyDocs } from "./energy/api.ts";
import { errorBody, toErrorResponse } from "./http/errors.ts";
import type { AppEnv } from "./http/env.ts";
import { requestContext } from "./http/middleware.ts";
import { clientNetwork } from "./http/client-address.ts";
import { httpRequestTimer, metricsHandler } from "./metrics/route.ts";
import { UNSTORABLE_TEXT_MESSAGE } from "./http/text-guard.ts";
import { requestGuards } from "./http/request-guards.ts";
import { checkoutPages } from "./checkout/index.ts";
import { portalPages } from "./portal/index.ts";
import type { Services } from "./services.ts";
import { paymentsApi } from "./v1/index.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export function createApp(services: Services) {
  // Hono's fastest router, named rather than left to SmartRouter's choice: a route it cannot hold (a static
  // segment beside a parameter, e.g. /pay/assets beside /pay/:id) throws here, when the app is built, instead
  // of silently moving every request to a slower router.
  const app = new Hono<AppEnv>({ router: new RegExpRouter() });
  app.use("*", requestContext(services.logger, httpRequestTimer(services.metrics), clientNetwork(services.config)));
  app.use(
    "/v1/*",
    requestGuards<AppEnv>({
      limitBody: bodyLimit({
        maxSize: MAX_BODY_BYTES,
        // The rest of the body is not read: close the connection so the client does not reuse it.
        onError: (c) => c.json(errorBody(c, "body_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`), 413, { connection: "close" }),
      }),
      refuseText: (c) => c.json(errorBody(c, "invalid_parameters", UNSTORABLE_TEXT_MESSAGE), 422),
      refuseJson: (c, message) => c.json(errorBody(c, "invalid_parameters", message), 422),
    }),
  );
  app.route("/v1", paymentsApi(services));
  app.route(
    "/portal",
    portalPages(services, (request, env) => app.fetch(request, env)),
  );
  app.route("/", checkoutPages(services));
  app.get("/", (c) => c.redirect("/v1/docs"));
  // Prometheus; not part of the /v1 interface (metrics/route.ts says who may read it).
  app.get("/metrics", metricsHandler(services.metrics, services.config.METRICS_TOKEN));
  const energy = energyApi(services);
  app.route("/energy/v1", energy);
  app.route("/energy", energyDocs(energy, services));

  app.notFound((c) => c.json(errorBody(c, "not_found", `no route ${c.req.method} ${c.req.path}`), 404));
  app.onError((error, c) => toErrorResponse(c, error));
  return app;
}

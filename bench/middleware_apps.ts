// The apps the middleware benchmark compares, built once per process: each
// stack's bare app beside the same app behind rateguard and behind the
// limiter users would pick instead, with its memory store. Every limiter
// runs at a limit no request reaches, keyed by the x-key header, so every
// request is an allowed one and the difference is the cost of deciding and
// of the fields it sends.
import express from "express";
import { rateLimit as expressRateLimitPeer } from "express-rate-limit";
import { type Context, Hono } from "hono";
import { rateLimiter as honoRateLimiterPeer } from "hono-rate-limiter";
import { Guard, Limit } from "../mod.ts";
import { rateLimit } from "../src/http/hono.ts";
import { expressRateLimit } from "../src/http/express.ts";
import { withRateLimit } from "../src/http/fetch.ts";

/** The limiters of one app: none, rateguard's, the peer's. */
export const LIMITERS = ["bare", "ours", "peer"] as const;
/**
 * Hono's routes past {@link LIMITERS}: an empty middleware (what any
 * middleware costs, Hono's composition), the floor of a limiter that
 * sends fields: an empty middleware that checks and appends two fixed
 * fields after the handler, as rateguard does, and rateguard sending no
 * fields (`headers: "none"`: what deciding costs without them).
 */
export const HONO_FLOORS = ["empty", "floor", "silent"] as const;
/**
 * The fetch stack's routes: bare, bare with two fixed fields of the size
 * rateguard sends (what any two fields cost on the runtime's server),
 * behind withRateLimit sending no fields (`headers: "none"`), and behind
 * withRateLimit (no peer: none is as common).
 */
export const FETCH_ROUTES = ["bare", "fields", "silent", "ours"] as const;
/** One of {@link LIMITERS}. */
export type LimiterName =
  | typeof LIMITERS[number]
  | typeof FETCH_ROUTES[number]
  | typeof HONO_FLOORS[number];

/** A limit no benchmark reaches, for rateguard and the peers alike. */
const PER_MINUTE = 1_000_000_000;

/** A guard that keeps every key the benchmark sends (10,000 at most) in its table. */
export function benchGuard(): Promise<Guard> {
  return Guard.builder().defaultLimit(Limit.perMinute(PER_MINUTE)).trackedKeys(16_384).spawn();
}

/** The path of a limiter's route in every app: `/bare`, `/ours`, `/peer`. */
export const pathOf = (limiter: LimiterName): string => `/${limiter}`;

/**
 * One Hono app with a route for each limiter: the bare route has its
 * handler alone (Hono's path with no middleware at all), the others a
 * middleware before the same handler.
 */
export function honoApp(guard: Guard): Hono {
  const app = new Hono();
  const hello = (c: Context) => c.text("hello\n");
  app.get(pathOf("bare"), hello);
  app.get(pathOf("empty"), async (_c, next) => await next(), hello);
  const check = { class: "", cost: 1 };
  app.get(pathOf("floor"), async (c, next) => {
    guard.check(c.req.header("x-key") ?? "", check);
    await next();
    c.res.headers.append("RateLimit-Policy", '"default";q=1000000000;w=60');
    c.res.headers.append("RateLimit", '"default";r=16666666;t=1');
  }, hello);
  const key = (c: Context) => c.req.header("x-key");
  app.get(pathOf("silent"), rateLimit({ guard, key, headers: "none" }), hello);
  app.get(pathOf("ours"), rateLimit({ guard, key }), hello);
  app.get(
    pathOf("peer"),
    honoRateLimiterPeer({
      windowMs: 60_000,
      limit: PER_MINUTE,
      standardHeaders: "draft-7",
      keyGenerator: (c) => c.req.header("x-key") ?? "",
    }),
    hello,
  );
  return app;
}

/** A `fetch` handler with the routes of {@link FETCH_ROUTES}. */
export function fetchHandler(
  guard: Guard,
): (request: Request, info?: unknown) => Promise<Response> | Response {
  const hello = () => new Response("hello\n", { headers: { "content-type": "text/plain" } });
  const key = (request: Request) => request.headers.get("x-key") ?? undefined;
  const ours = withRateLimit({ guard, key }, hello);
  const silent = withRateLimit({ guard, key, headers: "none" }, hello);
  const fields = () =>
    new Response("hello\n", {
      headers: {
        "content-type": "text/plain",
        "RateLimit-Policy": '"default";q=1000000000;w=60',
        "RateLimit": '"default";r=16666666;t=1',
      },
    });
  const oursPath = pathOf("ours"), fieldsPath = pathOf("fields"), silentPath = pathOf("silent");
  return (request, info) => {
    const url = request.url;
    return url.endsWith(oursPath)
      ? ours(request, info)
      : url.endsWith(fieldsPath)
      ? fields()
      : url.endsWith(silentPath)
      ? silent(request, info)
      : hello();
  };
}

/**
 * One Express app with a route for each limiter, and `/empty` behind a
 * middleware that only calls `next()` (what any Express middleware costs).
 */
export function expressApp(guard: Guard): express.Express {
  const app = express();
  app.set("etag", false);
  app.set("x-powered-by", false);
  const hello = (_req: express.Request, res: express.Response) => {
    res.type("text/plain").send("hello\n");
  };
  app.get(pathOf("bare"), hello);
  app.get(pathOf("empty"), (_req, _res, next) => next(), hello);
  app.get(pathOf("ours"), expressRateLimit({ guard, key: (req) => req.get("x-key") }), hello);
  app.get(
    pathOf("peer"),
    expressRateLimitPeer({
      windowMs: 60_000,
      limit: PER_MINUTE,
      standardHeaders: "draft-7",
      legacyHeaders: false,
      keyGenerator: (req) => req.get("x-key") ?? "",
      // The key is a header here, not an address: its checks of addresses do not apply.
      validate: false,
    }),
    hello,
  );
  return app;
}

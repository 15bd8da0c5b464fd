/**
 * Rate limiting for Hono apps: a middleware that checks each request's key
 * with a {@link Guard} (or anything with its `check`, such as the
 * sidecar's {@link Client}), answers a denied one with 429, `Retry-After`
 * and a problem of type quota-exceeded, and tells clients their limit in
 * the fields of the standard it is given (draft-10's `RateLimit-Policy`
 * and `RateLimit` by default). {@link clientIp} keys requests by the
 * client's address, behind proxies too.
 *
 * This is the subpath `@rateguard/guard/hono`: the guard itself
 * (`@rateguard/guard`) never loads Hono. The fields it writes come from
 * `@rateguard/guard/headers`, for any other framework to use; Express has
 * `@rateguard/guard/express`, and `fetch` handlers `@rateguard/guard/fetch`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { Guard } from "@rateguard/guard";
 * import { rateLimit, type RateLimitEnv } from "@rateguard/guard/hono";
 *
 * const guard = await Guard.builder().limit(100).spawn();
 * const app = new Hono<RateLimitEnv>();
 * // One limit per tenant; a request with no tenant is not limited, and an
 * // empty tenant is limited as one key shared by all such requests.
 * app.use("/api/*", rateLimit({ guard, key: (c) => c.req.header("x-tenant") }));
 * app.get("/api/hello", (c) => c.text(`hello, ${c.get("rateLimit")?.decision.remaining} left\n`));
 *
 * const res = await app.request("/api/hello", { headers: { "x-tenant": "42" } });
 * assert(res.status === 200 && res.headers.get("RateLimit") !== null);
 * assert((await app.request("/api/hello", { headers: { "x-tenant": "" } })).status === 200);
 * ```
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ConnInfo } from "hono/conninfo";
import {
  addresslessPeer,
  type ClientIpKey,
  clientKeyFunction,
  type ClientKeyOptions,
} from "./client_ip.ts";
import { deniedResponse } from "./denial.ts";
import { type LimitingOptions, type RateLimitInfo, RequestLimiter } from "./limiting.ts";

export * from "./common.ts";

/** Options of {@link rateLimit}: what every adapter takes, over Hono's context. */
export type RateLimitOptions = LimitingOptions<[Context]>;

/** The variables the middleware sets: `c.get("rateLimit")` is what was decided; use it as `new Hono<RateLimitEnv>()`. */
export interface RateLimitEnv {
  /** `rateLimit`: the decision for this request, undefined for one skipped or with no key. */
  Variables: { rateLimit: RateLimitInfo | undefined };
}

/**
 * A middleware that limits each request by its key. An admitted request
 * goes on with what was decided in `c.get("rateLimit")`, and its response
 * gets the rate limit fields, appended to `c.res.headers` so that two
 * limiters share a response; its type, body and status are left as the
 * handler made them, on every runtime's server. A denied one throws Hono's
 * `HTTPException` of 429: `app.onError` may restyle it (`err.cause` is the
 * {@link RateLimitInfo}, `err.getResponse()` the 429), and without an
 * `onError` Hono sends that 429 as it is: `Retry-After`, the fields, and an
 * `application/problem+json` body of type quota-exceeded naming the policy.
 * The exception rather than a hook of its own, because that is how Hono's
 * middleware report what ends a request: one place restyles them all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { HTTPException } from "hono/http-exception";
 * import { Guard, Limit } from "@rateguard/guard";
 * import { rateLimit } from "@rateguard/guard/hono";
 *
 * const guard = await Guard.builder().limit(1).burst(1)
 *   .class("pro", Limit.perSecond(100)).spawn();
 * const app = new Hono();
 * app.use(rateLimit({
 *   guard,
 *   // Pro tenants in their own class, by a header the gateway sets.
 *   key: (c) => {
 *     const tenant = c.req.header("x-tenant");
 *     if (tenant === undefined) return undefined;
 *     return c.req.header("x-plan") === "pro" ? { key: tenant, class: "pro" } : tenant;
 *   },
 *   skip: (c) => c.req.path === "/healthz",
 *   headers: ["draft-10", "legacy"],
 * }));
 * app.get("/", (c) => c.text("served\n"));
 * // A denial in the app's own style, its fields kept.
 * app.onError((err, c) => {
 *   if (!(err instanceof HTTPException) || err.status !== 429) throw err;
 *   const res = err.getResponse();
 *   return c.text("slow down\n", 429, Object.fromEntries(res.headers));
 * });
 *
 * const ask = () => app.request("/", { headers: { "x-tenant": "7" } });
 * assert((await ask()).status === 200);
 * const denied = await ask();
 * assert(denied.status === 429 && denied.headers.get("Retry-After") === "1");
 * assert(await denied.text() === "slow down\n");
 * ```
 *
 * @param options What decides, the key of a request, and which fields to send.
 * @returns The middleware, for `app.use`.
 * @throws {TypeError} when `guard` has no `check`, or `key` (or `cost`, `skip`) is not a function.
 * @throws {RangeError} when `headers` is not one of its values.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<RateLimitEnv> {
  const limiting = new RequestLimiter<[Context]>(options, "rateLimit", 1);
  return async function rateLimitMiddleware(c, next) {
    // Awaited only when something on the way answered a promise: a
    // synchronous key function and a Guard decide with no turn of the
    // microtask queue.
    let info = limiting.decide(c);
    if (info instanceof Promise) info = await info;
    if (info === undefined) return await next();
    c.set("rateLimit", info);
    if (!info.decision.allowed) {
      const res = deniedResponse(info, limiting);
      throw new HTTPException(429, { res, message: "rate limited", cause: info });
    }
    await next();
    if (!limiting.admissionFields) return;
    // Into the response's own headers, as Hono's middleware guide does,
    // not through c.header: after next() that rebuilds the response from
    // its body stream, and a stream has no type, so Bun.serve sent a
    // c.text() as application/octet-stream (Bun types a string body only
    // as it writes it, so no content-type was there yet to copy). They
    // are read as they are written: what another limiter wrote counts.
    const headers = c.res.headers;
    try {
      limiting.write(headers, info);
    } catch (e) {
      // Immutable headers (Response.redirect, a fetch response), whose type
      // is in them already: the first write is the one that throws, so
      // nothing was half written, and c.header's copy loses nothing.
      if (!(e instanceof TypeError)) throw e;
      limiting.write({
        get: (name) => headers.get(name),
        append: (name, value) => c.header(name, value, { append: true }),
        set: (name, value) => c.header(name, value),
      }, info);
    }
  };
}

/** Options of {@link clientIp}: Hono's `getConnInfo` for the runtime, who to trust, and what a request with no address gets. */
export interface HonoClientIpOptions extends ClientKeyOptions<[Context]> {
  /**
   * The runtime's `getConnInfo`: from `hono/deno`, `hono/bun` or
   * `@hono/node-server/conninfo` (or `@hono/deno`, `@hono/bun`).
   */
  readonly getConnInfo: (c: Context) => ConnInfo;
}

/**
 * A key function for {@link rateLimit}: the client's address. The peer of
 * the connection, as Hono's `getConnInfo` for the runtime tells it, or,
 * with `trustProxy`, the nearest address in `X-Forwarded-For` (or
 * `Forwarded`) that no trusted proxy wrote; an IPv6 client by its /56 (or
 * `ipv6Prefix`). Behind a proxy on a Unix socket, set `trustUnixSocket`. A
 * request whose address cannot be learned is denied with a 429 (or what
 * `unknownClient` says), never keyed with all the others, and counted in
 * the key function's `unknownClients`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { Guard } from "@rateguard/guard";
 * import { clientIp, rateLimit, type RateLimitEnv } from "@rateguard/guard/hono";
 *
 * const guard = await Guard.builder().limit(10).spawn();
 * // Behind one load balancer, on Deno: import { getConnInfo } from "hono/deno".
 * const getConnInfo = () => ({ remote: { address: "10.0.0.2" } });
 * const key = clientIp({ getConnInfo, trustProxy: ["10.0.0.0/8"] });
 * const app = new Hono<RateLimitEnv>();
 * app.use(rateLimit({ guard, key }));
 * app.get("/", (c) => c.text(c.get("rateLimit")?.key ?? ""));
 * const res = await app.request("/", {
 *   headers: { "x-forwarded-for": "2001:db8:1:1ff::7, 10.0.0.9" },
 * });
 * assert(await res.text() === "2001:db8:1:100::/56");
 * ```
 *
 * @param options The runtime's `getConnInfo`, the proxies to trust, the IPv6 prefix, and what a
 *   request with no address gets.
 * @returns The key function, with its count of requests with no address.
 * @throws {TypeError} when `getConnInfo` is not a function, or `trustProxy` or
 *   `trustUnixSocket` is malformed.
 * @throws {RangeError} when `trustProxy`, `header`, `ipv6Prefix` or `unknownClient` is out of
 *   range.
 */
export function clientIp(options: HonoClientIpOptions): ClientIpKey<[Context]> {
  if (typeof options?.getConnInfo !== "function") {
    throw new TypeError(
      "clientIp: getConnInfo must be the runtime's, from hono/deno, hono/bun or @hono/node-server/conninfo",
    );
  }
  const getConnInfo = options.getConnInfo;
  return clientKeyFunction<[Context]>(options, "clientIp", (find) => (c) =>
    find(
      getConnInfo(c).remote.address ?? addresslessPeer(c.env),
      (name) => c.req.header(name),
    ));
}

/**
 * Rate limiting for Hono apps: a middleware that checks each request's key
 * with a {@link Guard} (or anything with its `check`, such as the
 * sidecar's {@link Client}), answers a denied one with 429, `Retry-After`
 * and a problem of type quota-exceeded, and tells clients their limit in
 * the `RateLimit-Policy` and `RateLimit` fields of
 * draft-ietf-httpapi-ratelimit-headers-10.
 *
 * This is the subpath `@rateguard/guard/hono`: the guard itself
 * (`@rateguard/guard`) never loads Hono. The fields it writes come from
 * `@rateguard/guard/headers`, for any other framework to use.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { Guard } from "@rateguard/guard";
 * import { rateLimit } from "@rateguard/guard/hono";
 *
 * const guard = await Guard.builder().limit(100).spawn();
 * const app = new Hono();
 * // One limit per tenant; a request with no tenant is not limited.
 * app.use("/api/*", rateLimit({ guard, key: (c) => c.req.header("x-tenant") }));
 * app.get("/api/hello", (c) => c.text("hello\n"));
 *
 * const res = await app.request("/api/hello", { headers: { "x-tenant": "42" } });
 * assert(res.status === 200 && res.headers.get("RateLimit") !== null);
 * ```
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import type { Limit } from "../core/limit.ts";
import {
  appendRateLimitFields,
  type DecisionLike,
  type HeaderStyle,
  retryAfterSeconds,
} from "./fields.ts";
import type { Client } from "../client/client.ts";
import type { Guard } from "../runtime/guard.ts";

/** The problem type of a denial, registered by the RateLimit fields draft. */
export const QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

/**
 * What decides: a {@link Guard}, a {@link Client} of the sidecar, or
 * anything with a `check` of the same shape. With `limitFor` it also
 * tells the limit a key is held to, for `RateLimit-Policy`.
 */
export interface Limiter {
  /**
   * Checks a request for `key`.
   *
   * @param key The key.
   * @param options The class (`""`: the default class) and the cost.
   * @returns The decision, or a promise of it.
   */
  check(
    key: string,
    options: { readonly class: string; readonly cost: number },
  ): DecisionLike | Promise<DecisionLike>;
  /**
   * The limit `key` is held to, if the limiter can tell.
   *
   * @param key The key.
   * @param options The class (`""`: the default class).
   * @returns The limit, or undefined when unknown.
   */
  limitFor?(key: string, options: { readonly class: string }): Limit | undefined;
}

/**
 * A request's key, alone (the default class) or with its class, as a
 * check's items are; `undefined` lets the request pass unlimited.
 */
export type KeyOf = string | { readonly key: string; readonly class?: string } | undefined;

/** Options of {@link rateLimit}. */
export interface RateLimitOptions {
  /** What decides: a {@link Guard}, a sidecar {@link Client}, or another {@link Limiter}. */
  readonly guard: Limiter | Guard | Client;
  /**
   * The key of a request, or `{ key, class }`. Return `undefined` to let
   * a request pass unlimited; to limit anonymous requests, give them a key
   * of their own, such as `"anonymous"`.
   */
  readonly key: (c: Context) => KeyOf | Promise<KeyOf>;
  /**
   * What a request costs; 1 when left out.
   *
   * @default {() => 1}
   */
  readonly cost?: (c: Context) => number;
  /**
   * Which fields to send: `"ietf"` (also `true`), `"legacy"`
   * (`X-RateLimit-*`), `"both"`, or `"none"` (also `false`).
   *
   * @default {"ietf"}
   */
  readonly headers?: HeaderStyle | boolean;
  /**
   * The policy name in the fields.
   *
   * @default {the class, or "default" for the default class}
   */
  readonly policy?: (className: string) => string;
  /**
   * The limit to advertise in `RateLimit-Policy`; by.
   *
   * @default {the guard's limitFor, if it has one}
   */
  readonly limit?: (key: string, options: { readonly class: string }) => Limit | undefined;
}

/**
 * A middleware that limits each request by its key. An admitted request
 * goes on, and its response gets the rate limit fields; a denied one gets
 * 429 with `Retry-After`, the same fields, and an `application/problem+json`
 * body of type quota-exceeded naming the policy it violated. The fields are
 * appended, never overwritten, so two limiters can share a response.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
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
 *   headers: "both",
 * }));
 * app.get("/", (c) => c.text("served\n"));
 *
 * const ask = () => app.request("/", { headers: { "x-tenant": "7" } });
 * assert((await ask()).status === 200);
 * const denied = await ask();
 * assert(denied.status === 429 && denied.headers.get("Retry-After") === "1");
 * ```
 *
 * @param options What decides, the key of a request, and which fields to send.
 * @returns The middleware, for `app.use`.
 * @throws {TypeError} when `guard` has no `check` or `key` is not a function.
 * @throws {RangeError} when `headers` is not one of its values.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler {
  const limiter = options.guard as Limiter;
  if (limiter === null || typeof limiter !== "object" || typeof limiter.check !== "function") {
    throw new TypeError("rateLimit: guard must be a Guard, a Client, or have check()");
  }
  if (typeof options.key !== "function") {
    throw new TypeError("rateLimit: key must be a function of the request's context");
  }
  const style = options.headers === true || options.headers === undefined
    ? "ietf"
    : options.headers === false
    ? "none"
    : options.headers;
  if (!["ietf", "legacy", "both", "none"].includes(style)) {
    throw new RangeError(
      `rateLimit: headers must be "ietf", "legacy", "both" or "none", got ${JSON.stringify(style)}`,
    );
  }
  const policyOf = options.policy ?? ((className: string) => className || "default");
  const limitOf = options.limit ??
    (typeof limiter.limitFor === "function"
      ? (key: string, o: { readonly class: string }) => limiter.limitFor!(key, o)
      : () => undefined);

  return async function rateLimitMiddleware(c, next) {
    const found = await options.key(c);
    if (found === undefined) return await next();
    const key = typeof found === "string" ? found : found.key;
    const check = { class: typeof found === "string" ? "" : found.class ?? "", cost: 1 };
    if (options.cost !== undefined) check.cost = options.cost(c);
    const decision = await limiter.check(key, check);
    const fields = { policy: policyOf(check.class), limit: limitOf(key, check), decision, style };
    if (!decision.allowed) {
      const res = quotaExceeded(fields.policy, decision);
      appendRateLimitFields(res.headers, fields);
      return res;
    }
    await next();
    try {
      appendRateLimitFields(c.res.headers, fields);
    } catch (e) {
      // A handler may return a Response whose headers are immutable (one
      // from fetch): copy it once, then add the fields. The first append
      // is the one that throws, so nothing was half written.
      if (!(e instanceof TypeError)) throw e;
      c.res = new Response(c.res.body, c.res);
      appendRateLimitFields(c.res.headers, fields);
    }
  };
}

/** The 429 of a denial, with a problem body of type quota-exceeded. */
function quotaExceeded(policy: string, decision: DecisionLike): Response {
  const wait = Number.isFinite(decision.retryAfterMs)
    ? `retry in ${retryAfterSeconds(decision.retryAfterMs)} s`
    : "this request costs more than the limit ever admits at once";
  const body = {
    type: QUOTA_EXCEEDED,
    title: "Request cannot be satisfied as assigned quota has been exceeded",
    status: 429,
    detail: `the rate limit of policy ${JSON.stringify(policy)} is used up: ${wait}`,
    "violated-policies": [policy],
  };
  return new Response(JSON.stringify(body), {
    status: 429,
    headers: { "content-type": "application/problem+json" },
  });
}

/**
 * The HTTP fields that tell a client about its limit, for any framework
 * (`@rateguard/guard/headers`): `RateLimit-Policy` and `RateLimit` of
 * draft-ietf-httpapi-ratelimit-headers-10 as Structured Fields (RFC 9651;
 * the wire format drafts 11 and 12 keep), draft-7's `RateLimit`
 * dictionary, draft-6's separate fields, the older `X-RateLimit-*` trio,
 * and `Retry-After`. They write to a standard `Headers`, so an adapter for
 * any server can use them; the Hono middleware (`@rateguard/guard/hono`) is
 * one. Loads no framework. The client's address behind trusted proxies
 * (`clientIpResolver`) is the middleware's: `@rateguard/guard/fetch` (or
 * `./hono`, `./express`) exports it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard, Limit } from "@rateguard/guard";
 * import { appendRateLimitFields, retryAfterSeconds } from "@rateguard/guard/headers";
 *
 * const limit = Limit.perMinute(60).burst(1);
 * const guard = await Guard.builder().defaultLimit(limit).spawn();
 * guard.check("tenant:42");
 * const decision = guard.check("tenant:42"); // the burst of 1 is spent: denied
 * const headers = new Headers();
 * appendRateLimitFields(headers, { policy: "default", limit, decision });
 * assert(headers.get("RateLimit-Policy") === '"default";q=60;w=60');
 * assert(headers.get("Retry-After") === String(retryAfterSeconds(decision.retryAfterMs)));
 * ```
 *
 * @module
 */

export { type HeaderSet, headerSet, type HeaderStandard, type HeaderStyle } from "./field_style.ts";
export {
  appendRateLimitFields,
  applyWrites,
  type DecisionLike,
  type FieldWrite,
  policyItem,
  type RateLimitFields,
  rateLimitFieldWrites,
  rateLimitItem,
  retryAfterSeconds,
  sfString,
} from "./fields.ts";

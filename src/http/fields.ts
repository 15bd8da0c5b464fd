/**
 * The HTTP fields that tell a client about its limit: `RateLimit-Policy`
 * and `RateLimit` of draft-ietf-httpapi-ratelimit-headers-10, serialized as
 * Structured Fields (RFC 9651), the older `X-RateLimit-*` trio, and
 * `Retry-After`. Independent of any framework: the Hono middleware uses
 * them, and so can any handler that has a `Headers`.
 *
 * How a GCRA limit maps onto the draft's quota policy: `q` and `w` are the
 * limit as configured (1000/min is `q=1000;w=60`); `r` is how many requests
 * this instance would admit back to back now (at most the burst), and `t`
 * the seconds until the whole burst is back. A smoothed limit has no window
 * that resets all at once; `t` is the moment it has fully caught up.
 *
 * @module
 */

import type { Limit } from "../core/limit.ts";

/** What a decision tells a client; a {@link Decision} is one. */
export interface DecisionLike {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** Requests of cost 1 admitted back to back now. */
  readonly remaining: number;
  /** Milliseconds before a retry may be admitted; `Infinity` if never. */
  readonly retryAfterMs: number;
  /** Milliseconds until the full burst is back. */
  readonly resetMs: number;
}

/** Which rate limit fields to send. */
export type HeaderStyle = "ietf" | "legacy" | "both" | "none";

/** The largest integer RFC 9651 serializes (15 digits). */
const SF_INTEGER_MAX = 999_999_999_999_999;

/**
 * An RFC 9651 String: printable ASCII in double quotes, with `"` and `\`
 * escaped. Other characters cannot appear in an sf-string; each becomes
 * `?`, as a policy name is a label for people, not a key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sfString } from "./fields.ts";
 * assert(sfString('a "b"') === '"a \\"b\\""');
 * ```
 *
 * @param text Any text.
 * @returns The Structured Field String, quoted and escaped.
 */
export function sfString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code > 0x7e) out += "?";
    else if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else out += ch;
  }
  return out + '"';
}

/** An RFC 9651 Integer, clamped to its range: a count too large to say is "very many". */
function sfInteger(n: number): string {
  return String(Math.min(SF_INTEGER_MAX, Math.max(0, Math.floor(n))));
}

/**
 * Whole milliseconds, rounded up: a client waiting this long is not early.
 * No slack: a decision's durations are whole microseconds (the core's time
 * base), so a third of a second is 333.334 ms and three of them 1000 ms
 * exactly, and rounding them up is exact.
 */
export function ceilMs(ms: number): number {
  return Math.max(0, Math.ceil(ms));
}

/** Whole seconds, rounded up, as exact as {@link ceilMs}. */
export function ceilSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1_000));
}

/**
 * `Retry-After` in whole seconds: at least 1, as 0 would invite a retry at once.
 *
 * @param ms How long before a retry may be admitted.
 * @returns Whole seconds, at least 1.
 */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, ceilSeconds(ms));
}

/**
 * `"name";q=1000;w=60`: one item of `RateLimit-Policy`.
 *
 * @param name The policy's name.
 * @param limit The limit it stands for.
 * @returns The item.
 */
export function policyItem(name: string, limit: Limit): string {
  return `${sfString(name)};q=${sfInteger(limit.count())};w=${
    sfInteger(ceilSeconds(limit.periodMs()))
  }`;
}

/**
 * `"name";r=49;t=3`: one item of `RateLimit`.
 *
 * @param name The policy's name.
 * @param decision What the check decided.
 * @returns The item.
 */
export function rateLimitItem(name: string, decision: DecisionLike): string {
  return `${sfString(name)};r=${sfInteger(decision.remaining)};t=${
    sfInteger(ceilSeconds(decision.resetMs))
  }`;
}

/** What {@link appendRateLimitFields} writes. */
export interface RateLimitFields {
  /** The policy's name, such as the class. */
  readonly policy: string;
  /** The limit the key is held to; without it `RateLimit-Policy` and `X-RateLimit-Limit` are left out. */
  readonly limit: Limit | undefined;
  /** What the check decided. */
  readonly decision: DecisionLike;
  /** Which fields; `"ietf"` when left out. */
  readonly style?: HeaderStyle;
}

/**
 * Adds the rate limit fields of one decision to `headers`. The IETF fields
 * are lists, so they are appended: two limiters on one response each add
 * their policy. The legacy fields hold one value, so the limiter with the
 * fewest remaining keeps them. A denial adds `Retry-After` (whole seconds,
 * rounded up; left out when a retry can never succeed), keeping a later
 * one already there.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Decision, Limit } from "@rateguard/guard";
 * import { appendRateLimitFields } from "./fields.ts";
 *
 * const headers = new Headers();
 * const decision = new Decision(true, 0, 49, 2_500);
 * appendRateLimitFields(headers, { policy: "default", limit: Limit.perMinute(1_000), decision });
 * assert(headers.get("RateLimit-Policy") === '"default";q=1000;w=60');
 * assert(headers.get("RateLimit") === '"default";r=49;t=3');
 * ```
 *
 * @param headers Where the fields go: a response's or a request's `Headers`.
 * @param fields The policy, its limit, the decision and which fields to send.
 */
export function appendRateLimitFields(headers: Headers, fields: RateLimitFields): void {
  const { policy, limit, decision, style = "ietf" } = fields;
  if (style === "ietf" || style === "both") {
    if (limit !== undefined) headers.append("RateLimit-Policy", policyItem(policy, limit));
    headers.append("RateLimit", rateLimitItem(policy, decision));
  }
  if (style === "legacy" || style === "both") {
    const before = Number(headers.get("X-RateLimit-Remaining") ?? Infinity);
    if (!(decision.remaining >= before)) {
      if (limit !== undefined) headers.set("X-RateLimit-Limit", sfInteger(limit.count()));
      else headers.delete("X-RateLimit-Limit");
      headers.set("X-RateLimit-Remaining", sfInteger(decision.remaining));
      headers.set("X-RateLimit-Reset", sfInteger(ceilSeconds(decision.resetMs)));
    }
  }
  if (!decision.allowed && Number.isFinite(decision.retryAfterMs)) {
    const seconds = retryAfterSeconds(decision.retryAfterMs);
    const before = Number(headers.get("Retry-After") ?? 0);
    if (!(before >= seconds)) headers.set("Retry-After", String(seconds));
  }
}

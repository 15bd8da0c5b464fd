/**
 * The HTTP fields that tell a client about its limit, in the standard a
 * caller selects: `RateLimit-Policy` and `RateLimit` of
 * draft-ietf-httpapi-ratelimit-headers-10 as Structured Fields (RFC 9651;
 * drafts 11 and 12 keep this wire format), draft-7's `RateLimit`
 * dictionary, draft-6's separate `RateLimit-Limit`, `-Remaining` and
 * `-Reset`, the older `X-RateLimit-*` trio, and `Retry-After`. Independent
 * of any framework: the Hono, Express and fetch adapters use them, and so
 * can any handler that has a `Headers`.
 *
 * How a GCRA limit maps onto the draft's quota policy: `q` and `w` are the
 * limit as configured (1000/min is `q=1000;w=60`); `r` is how many requests
 * this instance would admit back to back now (at most the burst), and `t`
 * the seconds until the whole burst is back. A smoothed limit has no window
 * that resets all at once; `t` is the moment it has fully caught up. On a
 * denial `t` is the `Retry-After` instead, so that the two name one moment
 * and a client that waits for `t` is never early.
 *
 * @module
 */

import type { Limit } from "../core/limit.ts";
import { type HeaderSet, headerSet, type HeaderStyle } from "./field_style.ts";

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
  /**
   * Set when the limiter could not decide and the decision is a failure
   * policy's (a sidecar {@link Client}'s `failure`): an admission then says
   * nothing of what is left.
   */
  readonly failure?: unknown;
}

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
  return policyText(name, limit).item!;
}

/**
 * The seconds a client is told to wait for its quota: until the full burst
 * is back, or on a denial the `Retry-After` itself, so that the two agree
 * (a retry can never be admitted: until the burst is back).
 */
function resetSeconds(decision: DecisionLike): number {
  return !decision.allowed && Number.isFinite(decision.retryAfterMs)
    ? retryAfterSeconds(decision.retryAfterMs)
    : ceilSeconds(decision.resetMs);
}

/**
 * `"name";r=49;t=3`: one item of `RateLimit`. On a denial `t` is the
 * `Retry-After`, never later.
 *
 * @param name The policy's name.
 * @param decision What the check decided.
 * @returns The item.
 */
export function rateLimitItem(name: string, decision: DecisionLike): string {
  return `${sfString(name)};r=${sfInteger(decision.remaining)};t=${
    sfInteger(resetSeconds(decision))
  }`;
}

/** What {@link appendRateLimitFields} writes. */
export interface RateLimitFields {
  /** The policy's name, such as the class. */
  readonly policy: string;
  /** The limit the key is held to; without it the fields that tell the limit are left out. */
  readonly limit: Limit | undefined;
  /** What the check decided. */
  readonly decision: DecisionLike;
  /** Which fields; draft-10's when left out. */
  readonly style?: HeaderStyle | HeaderSet;
}

/**
 * One field to write: its name, its value, and whether to append it to a
 * list already there (or else to set it, replacing one).
 */
export type FieldWrite = readonly [name: string, value: string, append: boolean];

/**
 * The fields of one decision, as writes for any framework's response:
 * `headers.append` or `headers.set` by the third element (on a fetch
 * `Response`'s headers, Hono's `c.res.headers`, Express's `res.append` or
 * `res.setHeader`). List fields (draft-10's, and every draft's
 * `RateLimit-Policy`) are appended, so two limiters on one response each
 * add their policy; fields that hold one value are kept by the limiter with
 * the fewest remaining, read through `existing`. A limiter that failed open
 * sends no field that tells what is left. A denial adds `Retry-After`
 * (whole seconds, rounded up; left out when a retry can never succeed),
 * keeping a later one already there.
 *
 * @param fields The policy, its limit, the decision and which fields to send.
 * @param existing A field's value on the response so far, or null.
 * @returns The writes, in order.
 */
export function rateLimitFieldWrites(
  fields: RateLimitFields,
  existing: (name: string) => string | null | undefined,
): FieldWrite[] {
  const out: FieldWrite[] = [];
  writeFields(
    {
      get: existing,
      append: (name, value) => void out.push([name, value, true]),
      set: (name, value) => void out.push([name, value, false]),
    },
    styleOf(fields.style),
    policyText(fields.policy, fields.limit),
    fields.decision,
  );
  return out;
}

function styleOf(style: HeaderStyle | HeaderSet | undefined): HeaderSet {
  return typeof style === "object" && !Array.isArray(style)
    ? style as HeaderSet
    : headerSet(style as HeaderStyle | undefined, "rateLimitFieldWrites");
}

/**
 * Where fields go: a `Headers` is one, and an adapter wraps its framework's
 * response in one. Reads see the response so far: no field is read after
 * this decision wrote it, so reads before or between the writes agree.
 */
export interface FieldSink {
  /** A field's value on the response so far, or null. */
  get(name: string): string | null | undefined;
  /** Adds a value to a list field. */
  append(name: string, value: string): void;
  /** Sets a field that holds one value, replacing one there. */
  set(name: string, value: string): void;
}

/**
 * What the fields say of one policy and its limit, whatever the decision:
 * made once for each and kept by an adapter, as they are the same text on
 * every request.
 */
export interface PolicyText {
  /** The name as an sf-string. */
  readonly quoted: string;
  /** draft-10's `RateLimit-Policy` item; undefined with no limit. */
  readonly item: string | undefined;
  /** The older drafts' `RateLimit-Policy`, `q;w=w`; undefined with no limit. */
  readonly drafted: string | undefined;
  /** The limit's count, as a field tells it; undefined with no limit. */
  readonly count: string | undefined;
}

/**
 * The text of a policy's fields.
 *
 * @param name The policy's name.
 * @param limit The limit it stands for, if known.
 * @returns The text.
 */
export function policyText(name: string, limit: Limit | undefined): PolicyText {
  const quoted = sfString(name);
  if (limit === undefined) return { quoted, item: undefined, drafted: undefined, count: undefined };
  const count = sfInteger(limit.count()), w = sfInteger(ceilSeconds(limit.periodMs()));
  return { quoted, item: `${quoted};q=${count};w=${w}`, drafted: `${count};w=${w}`, count };
}

/**
 * Writes the fields of one decision to `sink`, as
 * {@link rateLimitFieldWrites} says, in the same order.
 *
 * @param sink Where they go.
 * @param set Which fields.
 * @param text The policy's text.
 * @param decision What the check decided.
 */
export function writeFields(
  sink: FieldSink,
  set: HeaderSet,
  text: PolicyText,
  decision: DecisionLike,
): void {
  // An admission by the failure policy (the limiter could not decide)
  // counted nothing: it sends the policy, no count of what is left.
  const counted = !(decision.allowed && decision.failure !== undefined);
  const draft = set.draft;
  if (draft === "draft-10") {
    if (text.item !== undefined) sink.append("RateLimit-Policy", text.item);
    if (counted) {
      const r = sfInteger(decision.remaining), t = sfInteger(resetSeconds(decision));
      sink.append("RateLimit", `${text.quoted};r=${r};t=${t}`);
    }
  } else if (draft !== undefined && text.drafted !== undefined) {
    sink.append("RateLimit-Policy", text.drafted);
  }
  if (
    draft === "draft-7" && counted &&
    fewerLeftThan(decision, sink.get("RateLimit")?.match(/remaining=(\d+)/)?.[1])
  ) {
    const q = text.count === undefined ? "" : `limit=${text.count}, `;
    const r = sfInteger(decision.remaining), t = sfInteger(resetSeconds(decision));
    sink.set("RateLimit", `${q}remaining=${r}, reset=${t}`);
  }
  if (draft === "draft-6" && counted) writeTrio(sink, "RateLimit", text, decision);
  if (set.legacy && counted) writeTrio(sink, "X-RateLimit", text, decision);
  if (!decision.allowed && Number.isFinite(decision.retryAfterMs)) {
    const seconds = retryAfterSeconds(decision.retryAfterMs);
    if (!(Number(sink.get("Retry-After") ?? 0) >= seconds)) {
      sink.set("Retry-After", String(seconds));
    }
  }
}

/**
 * Whether a single-valued field goes: only if this decision has fewer left
 * than the one already there. A function of its own, not a closure made on
 * each request: tsx (esbuild's keepNames) names every closure as it is
 * made, a property definition per request.
 */
function fewerLeftThan(decision: DecisionLike, shown: string | null | undefined): boolean {
  return !(decision.remaining >= Number(shown ?? Infinity));
}

/**
 * draft-6's or the legacy `-Limit`, `-Remaining` and `-Reset`, unless a
 * decision already written there has fewer left.
 */
function writeTrio(
  sink: FieldSink,
  prefix: string,
  text: PolicyText,
  decision: DecisionLike,
): void {
  if (!fewerLeftThan(decision, sink.get(`${prefix}-Remaining`))) return;
  if (text.count !== undefined) sink.set(`${prefix}-Limit`, text.count);
  sink.set(`${prefix}-Remaining`, sfInteger(decision.remaining));
  sink.set(`${prefix}-Reset`, sfInteger(resetSeconds(decision)));
}

/**
 * Adds the rate limit fields of one decision to `headers`, as
 * {@link rateLimitFieldWrites} says.
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
 * @throws {RangeError} when `style` names no standard.
 */
export function appendRateLimitFields(headers: Headers, fields: RateLimitFields): void {
  writeFields(
    headers,
    styleOf(fields.style),
    policyText(fields.policy, fields.limit),
    fields.decision,
  );
}

/**
 * Writes fields to `headers`, appending or setting each as it says.
 *
 * @param headers Where they go.
 * @param writes The fields.
 */
export function applyWrites(headers: Headers, writes: readonly FieldWrite[]): void {
  for (const [name, value, append] of writes) {
    if (append) headers.append(name, value);
    else headers.set(name, value);
  }
}

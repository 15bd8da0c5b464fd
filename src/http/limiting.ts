/**
 * What the Hono, Express and fetch adapters share: their options, read
 * once; the key of a request, made safe to check; the decision; the fields
 * it sends; and the problem of a denial. Loads no framework.
 *
 * @module
 */

import type { Limit } from "../core/limit.ts";
import type { Client } from "../client/client.ts";
import type { Guard } from "../runtime/guard.ts";
import { GUARD_BOUNDS } from "../core/options.ts";
import { UNKNOWN_CLIENT, UNKNOWN_CLIENT_DENIED, unknownClientDenial } from "./client_ip.ts";
import {
  applyWrites,
  type DecisionLike,
  type FieldWrite,
  type HeaderSet,
  headerSet,
  type HeaderStyle,
  rateLimitFieldWrites,
  retryAfterSeconds,
} from "./fields.ts";

/** The problem type of a denial, registered by the RateLimit fields draft. */
export const QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

/**
 * The key an empty key is checked as: one key shared by every request whose
 * key is empty, so that sending an empty header (`x-tenant:`) buys a client
 * no limit of its own, and no way around one. A header cannot hold the NUL
 * it starts with, so no client names it by sending it.
 */
export const EMPTY_KEY = "\u0000";

/** What a key longer than the limiter takes is checked as: this, then its SHA-256. */
const LONG_KEY_PREFIX = "\u0000sha256:";

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
  /**
   * The longest key the limiter takes, in bytes of UTF-8: longer keys are
   * checked by their hash. 1024 (the guard's default) when left out.
   *
   * @returns The bound.
   */
  maxKeyBytes?(): number;
}

/**
 * A request's key, alone (the default class) or with its class, as a
 * check's items are; `undefined` lets the request pass unlimited. An empty
 * key is limited as {@link EMPTY_KEY}, one key for all of them.
 */
export type KeyOf = string | { readonly key: string; readonly class?: string } | undefined;

/** What was decided for a request: what handlers read, and what a denial carries. */
export interface RateLimitInfo {
  /** The key checked (after {@link EMPTY_KEY} and the hash of a long key). */
  readonly key: string;
  /** The class (`""`: the default class). */
  readonly class: string;
  /** What the request cost. */
  readonly cost: number;
  /** The policy's name in the fields. */
  readonly policy: string;
  /** The limit the fields tell, if known. */
  readonly limit: Limit | undefined;
  /** The decision. */
  readonly decision: DecisionLike;
}

/**
 * The options every adapter takes; `A` is what it hands the functions: Hono
 * a context, Express the request and response, fetch the request and the
 * server's info.
 */
export interface LimitingOptions<A extends unknown[]> {
  /** What decides: a {@link Guard}, a sidecar {@link Client}, or another {@link Limiter}. */
  readonly guard: Limiter | Guard | Client;
  /**
   * The key of a request, or `{ key, class }`. Return `undefined` to let
   * a request pass unlimited; to limit anonymous requests, give them a key
   * of their own, such as `"anonymous"`. An empty key is one shared key
   * ({@link EMPTY_KEY}); a key longer than the limiter takes is checked
   * by its SHA-256.
   */
  readonly key: (...args: A) => KeyOf | Promise<KeyOf>;
  /**
   * What a request costs.
   *
   * @default {() => 1}
   */
  readonly cost?: (...args: A) => number | Promise<number>;
  /**
   * Requests to let through unchecked, with no fields: health checks, say.
   *
   * @default {none}
   */
  readonly skip?: (...args: A) => boolean | Promise<boolean>;
  /**
   * Which fields to send: a {@link HeaderStandard} (`"draft-10"`,
   * `"draft-7"`, `"draft-6"`, `"legacy"`), a draft with `"legacy"`, or
   * `"ietf"` (also `true`), `"both"`, `"none"` (also `false`).
   *
   * @default {"draft-10"}
   */
  readonly headers?: HeaderStyle | boolean;
  /**
   * The policy name in the fields.
   *
   * @default {the class, or "default" for the default class}
   */
  readonly policy?: (className: string) => string;
  /**
   * The limit to advertise in `RateLimit-Policy`.
   *
   * @default {the guard's limitFor, if it has one}
   */
  readonly limit?: (key: string, options: { readonly class: string }) => Limit | undefined;
}

/** Options read once, for an adapter's requests. */
export class Limiting<A extends unknown[]> {
  readonly #options: LimitingOptions<A>;
  readonly #limiter: Limiter;
  readonly #maxKeyBytes: number;
  readonly #policyOf: (className: string) => string;
  readonly #limitOf: (key: string, options: { readonly class: string }) => Limit | undefined;
  /** Which fields go. */
  readonly headers: HeaderSet;

  /**
   * Reads and checks the options.
   *
   * @param options The adapter's options.
   * @param who The adapter's name, for messages.
   * @throws {TypeError} when `guard` has no `check`, or `key`, `cost`, `skip` is not a function.
   * @throws {RangeError} when `headers` is not one of its values.
   */
  constructor(options: LimitingOptions<A>, who: string) {
    const limiter = options?.guard as Limiter;
    if (limiter === null || typeof limiter !== "object" || typeof limiter.check !== "function") {
      throw new TypeError(`${who}: guard must be a Guard, a Client, or have check()`);
    }
    if (typeof options.key !== "function") {
      throw new TypeError(`${who}: key must be a function of the request`);
    }
    for (const name of ["cost", "skip", "policy", "limit"] as const) {
      if (options[name] !== undefined && typeof options[name] !== "function") {
        throw new TypeError(`${who}: ${name} must be a function when given`);
      }
    }
    this.#options = options;
    this.#limiter = limiter;
    this.headers = headerSet(options.headers, who);
    this.#maxKeyBytes = typeof limiter.maxKeyBytes === "function"
      ? limiter.maxKeyBytes()
      : GUARD_BOUNDS.maxKeyBytes.default;
    this.#policyOf = options.policy ?? ((className: string) => className || "default");
    this.#limitOf = options.limit ??
      (typeof limiter.limitFor === "function"
        ? (key, o) => limiter.limitFor!(key, o)
        : () => undefined);
  }

  /**
   * Checks a request, unless it is skipped or has no key.
   *
   * @param args What the adapter hands the option functions.
   * @returns What was decided, or undefined for a request let through unchecked.
   */
  async decide(...args: A): Promise<RateLimitInfo | undefined> {
    const options = this.#options;
    if (options.skip !== undefined && await options.skip(...args)) return undefined;
    const found = await options.key(...args);
    if (found === undefined) return undefined;
    if (found === UNKNOWN_CLIENT) return unknownClientDenial(this.#policyOf(""));
    const raw = typeof found === "string" ? found : found?.key;
    const rawClass = typeof found === "string" ? "" : found.class ?? "";
    // A class named by the client (a plan header, say) too long for the
    // limiter is checked by its hash as well: an unknown class, which the
    // default limit holds.
    const className = typeof rawClass === "string" && rawClass !== ""
      ? await this.#safeKey(rawClass)
      : rawClass;
    const key = typeof raw === "string" ? await this.#safeKey(raw) : raw;
    const check = { class: className, cost: 1 };
    if (options.cost !== undefined) check.cost = await options.cost(...args);
    const decision = await this.#limiter.check(key, check);
    return {
      key,
      class: className,
      cost: check.cost,
      policy: this.#policyOf(className),
      limit: this.#limitOf(key, check),
      decision,
    };
  }

  /**
   * The fields of a decision, as writes.
   *
   * @param info What was decided.
   * @param existing A field's value on the response so far.
   * @returns The writes.
   */
  writes(info: RateLimitInfo, existing: (name: string) => string | null | undefined): FieldWrite[] {
    const { policy, limit, decision } = info;
    return rateLimitFieldWrites({ policy, limit, decision, style: this.headers }, existing);
  }

  /** A key the limiter takes, for any string a client can make the key function return. */
  async #safeKey(key: string): Promise<string> {
    if (key === "") return EMPTY_KEY;
    if (key.length * 3 <= this.#maxKeyBytes) return key;
    const bytes = new TextEncoder().encode(key);
    if (bytes.length <= this.#maxKeyBytes) return key;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return LONG_KEY_PREFIX + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  }
}

/**
 * The body of a denial: an `application/problem+json` of type
 * quota-exceeded naming the policy it violated.
 *
 * @param info The denial.
 * @returns The body, as JSON text.
 */
export function problemBody(info: RateLimitInfo): string {
  const { policy, decision } = info;
  const wait = Number.isFinite(decision.retryAfterMs)
    ? `retry in ${retryAfterSeconds(decision.retryAfterMs)} s`
    : "this request costs more than the limit ever admits at once";
  return JSON.stringify({
    type: QUOTA_EXCEEDED,
    title: "Request cannot be satisfied as assigned quota has been exceeded",
    status: 429,
    detail: decision === UNKNOWN_CLIENT_DENIED
      ? "the client's address cannot be learned, and requests without one are denied"
      : `the rate limit of policy ${JSON.stringify(policy)} is used up: ${wait}`,
    "violated-policies": [policy],
  });
}

/**
 * The 429 of a denial, with its fields and the problem body.
 *
 * @param info The denial.
 * @param writes Its fields.
 * @returns The response.
 */
export function deniedResponse(info: RateLimitInfo, writes: readonly FieldWrite[]): Response {
  const headers = new Headers({ "content-type": "application/problem+json" });
  applyWrites(headers, writes);
  return new Response(problemBody(info), { status: 429, headers });
}

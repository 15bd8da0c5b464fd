/**
 * What the Hono, Express and fetch adapters share: their options, read
 * once; the key of a request, made safe to check; the decision; and the
 * fields it sends. The answer to a denial is `denial.ts`'s. Loads no
 * framework.
 *
 * @module
 */

import { Limit } from "../core/limit.ts";
import { GUARD_BOUNDS } from "../core/options.ts";
import { type HeaderSet, headerSet, type HeaderStyle } from "./field_style.ts";
import {
  type DecisionLike,
  type FieldSink,
  type PolicyText,
  policyText,
  writeFields,
} from "./fields.ts";

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
 * What `clientIpResolver` gives for a request whose client address
 * cannot be learned, and the key a denial of such a request names. The
 * adapters' key functions never check it as a key: every such request
 * would share it, and one client's burst would deny all the others.
 */
export const UNKNOWN_ADDRESS = "unknown";

/**
 * What a key function gives for a request denied for want of an address:
 * the adapters answer it with a 429 and check no key. Compared by identity,
 * so no key a key function returns is taken for it.
 */
export const UNKNOWN_CLIENT: { readonly key: string } = Object.freeze({ key: UNKNOWN_ADDRESS });

/** The decision of a request denied for want of a client address; retrying does not help, so no `Retry-After`. */
export const UNKNOWN_CLIENT_DENIED: DecisionLike = Object.freeze({
  allowed: false,
  remaining: 0,
  retryAfterMs: Infinity,
  resetMs: 0,
});

/**
 * What was decided for a request a key function gave {@link UNKNOWN_CLIENT}:
 * denied, with no key checked, since the one key all such requests would
 * take is what lets one client's burst deny every other.
 *
 * @param policy The policy's name in the fields.
 * @returns The denial.
 */
export function unknownClientDenial(policy: string): RateLimitInfo {
  const decision = UNKNOWN_CLIENT_DENIED;
  return { key: UNKNOWN_ADDRESS, class: "", cost: 0, policy, limit: undefined, decision };
}

/**
 * What decides: a `Guard`, a sidecar `Client`, or anything with a `check`
 * of the same shape (the guard and the client are limiters as they are).
 * With `limitFor` it also tells the limit a key is held to, for
 * `RateLimit-Policy`.
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
  /** What decides: a `Guard`, a sidecar `Client`, or another {@link Limiter}. */
  readonly guard: Limiter;
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

/**
 * What limits an adapter's requests, framework aside: its options, checked
 * once, then for each request the decision (`decide`) and its fields
 * (`write`).
 */
export class RequestLimiter<A extends unknown[]> {
  readonly #limiter: Limiter;
  readonly #key: OptionCall<KeyOf | Promise<KeyOf>>;
  readonly #cost: OptionCall<number | Promise<number>> | undefined;
  readonly #skip: OptionCall<boolean | Promise<boolean>> | undefined;
  /** Whether the option functions are handed two arguments (Express, fetch) or one (Hono). */
  readonly #pair: boolean;
  readonly #maxKeyBytes: number;
  readonly #policyOf: (className: string) => string;
  readonly #limitOf: (key: string, options: { readonly class: string }) => Limit | undefined;
  readonly #texts = new Map<string, { limit: Limit | undefined; text: PolicyText }>();
  /** Which fields go. */
  readonly headers: HeaderSet;
  /**
   * Whether an admitted request's response gets any field: not with
   * `headers: "none"`, whose adapters then leave the response's headers
   * untouched (on Bun and Deno a response's `headers` is an object made
   * when first read). A denial's `Retry-After` goes either way.
   */
  readonly admissionFields: boolean;

  /**
   * Reads and checks the options.
   *
   * @param options The adapter's options.
   * @param who The adapter's name, for messages.
   * @param arity How many arguments the adapter hands the option functions: `A`'s length.
   * @throws {TypeError} when `guard` has no `check`, or `key`, `cost`, `skip` is not a function.
   * @throws {RangeError} when `headers` is not one of its values.
   */
  constructor(options: LimitingOptions<A>, who: string, arity: A["length"] & (1 | 2)) {
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
    this.#limiter = limiter;
    // Held as functions of two arguments and called with as many as the
    // adapter hands them (see #call): a fixed call, not a rest parameter
    // spread into each, which Bun allocated an array for on every request.
    this.#key = options.key as unknown as OptionCall<KeyOf | Promise<KeyOf>>;
    this.#cost = options.cost as unknown as OptionCall<number | Promise<number>> | undefined;
    this.#skip = options.skip as unknown as OptionCall<boolean | Promise<boolean>> | undefined;
    this.#pair = arity === 2;
    this.headers = headerSet(options.headers, who);
    this.admissionFields = this.headers.draft !== undefined || this.headers.legacy;
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
   * Checks a request, unless it is skipped or has no key. What the option
   * functions and the limiter answer at once is used at once: a promise
   * only where one of them returned one, as every await costs a turn of
   * the event loop's microtasks on each request.
   *
   * @param a The first of what the adapter hands the option functions.
   * @param b The second, for an adapter that hands them two.
   * @returns What was decided, or undefined for a request let through
   *   unchecked; a promise of it when something on the way was one. A
   *   function that throws throws here, or rejects the promise.
   */
  decide(a: A[0], b?: A[1]): Decided {
    const skip = this.#skip;
    if (skip !== undefined) {
      const skipped = this.#call(skip, a, b);
      if (isThenable(skipped)) {
        return Promise.resolve(skipped).then((s) => s ? undefined : this.#keyed(a, b));
      }
      if (skipped) return undefined;
    }
    return this.#keyed(a, b);
  }

  /** An option function called with the adapter's one or two arguments, no more. */
  #call<R>(f: OptionCall<R>, a: unknown, b: unknown): R {
    return this.#pair ? f(a, b) : (f as (a: unknown) => R)(a);
  }

  #keyed(a: unknown, b: unknown): Decided {
    const found = this.#call(this.#key, a, b);
    if (isThenable(found)) return Promise.resolve(found).then((f) => this.#checked(f, a, b));
    return this.#checked(found, a, b);
  }

  #checked(found: KeyOf, a: unknown, b: unknown): Decided {
    if (found === undefined) return undefined;
    if (found === UNKNOWN_CLIENT) return unknownClientDenial(this.#policyOf(""));
    const raw = typeof found === "string" ? found : found?.key;
    const rawClass = typeof found === "string" ? "" : found.class ?? "";
    // A class named by the client (a plan header, say) too long for the
    // limiter is checked by its hash as well: an unknown class, which the
    // default limit holds.
    const className = typeof rawClass === "string" && rawClass !== ""
      ? this.#safeKey(rawClass)
      : rawClass;
    const key = typeof raw === "string" ? this.#safeKey(raw) : raw;
    if (typeof className !== "string" || typeof key !== "string") {
      return Promise.all([className, key]).then(([c, k]) => this.#costed(k, c, a, b));
    }
    return this.#costed(key, className, a, b);
  }

  #costed(key: string, className: string, a: unknown, b: unknown): Decided {
    const cost = this.#cost;
    // The default class at the default cost, the most common check, takes
    // one options object for every request rather than a new one each.
    if (cost === undefined && className === "") return this.#checkedWith(key, DEFAULT_CHECK);
    const check = { class: className, cost: 1 };
    if (cost !== undefined) {
      const found = this.#call(cost, a, b);
      if (isThenable(found)) {
        return Promise.resolve(found).then((n) => {
          check.cost = n;
          return this.#checkedWith(key, check);
        });
      }
      check.cost = found;
    }
    return this.#checkedWith(key, check);
  }

  #checkedWith(key: string, check: Check): Decided {
    const decision = this.#limiter.check(key, check);
    if (isThenable(decision)) {
      return Promise.resolve(decision).then((d) => this.#info(key, check, d));
    }
    return this.#info(key, check, decision);
  }

  #info(key: string, check: Check, decision: DecisionLike): RateLimitInfo {
    return {
      key,
      class: check.class,
      cost: check.cost,
      policy: this.#policyOf(check.class),
      limit: this.#limitOf(key, check),
      decision,
    };
  }

  /**
   * Writes the fields of a decision.
   *
   * @param sink Where they go, and what the response holds so far.
   * @param info What was decided.
   */
  write(sink: FieldSink, info: RateLimitInfo): void {
    writeFields(sink, this.headers, this.#text(info.policy, info.limit), info.decision);
  }

  /**
   * A policy's text, kept: the same on every request of the policy. The
   * policy's name can come from a client (a class it names), so the cache
   * is bounded, and emptied when full rather than kept in order: a policy
   * in use is back in it on its next request.
   */
  #text(policy: string, limit: Limit | undefined): PolicyText {
    const kept = this.#texts.get(policy);
    if (kept !== undefined && kept.limit === limit) return kept.text;
    const text = policyText(policy, limit);
    // A Limit is immutable, so its identity stands for its text; anything
    // else shaped like one might change, and is read again each time.
    if (limit === undefined || limit instanceof Limit) {
      if (this.#texts.size >= POLICY_TEXTS_MAX) this.#texts.clear();
      this.#texts.set(policy, { limit, text });
    }
    return text;
  }

  /**
   * A key the limiter takes, for any string a client can make the key
   * function return: at once, but for a key too long, whose digest Web
   * Crypto gives only as a promise.
   */
  #safeKey(key: string): string | Promise<string> {
    if (key === "") return EMPTY_KEY;
    if (key.length * 3 <= this.#maxKeyBytes) return key;
    const bytes = new TextEncoder().encode(key);
    if (bytes.length <= this.#maxKeyBytes) return key;
    return crypto.subtle.digest("SHA-256", bytes).then((digest) =>
      LONG_KEY_PREFIX +
      Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")
    );
  }
}

/** What {@link RequestLimiter.decide} answers: at once when it can, else a promise. */
export type Decided = RateLimitInfo | undefined | Promise<RateLimitInfo | undefined>;

/** An option function as {@link RequestLimiter} holds it: of the adapter's one or two arguments. */
type OptionCall<R> = (a: unknown, b: unknown) => R;

/** What a request is checked with: its class and its cost. */
type Check = { readonly class: string; readonly cost: number };

/** The options of a check of the default class at cost 1, shared by every such check. */
const DEFAULT_CHECK: Check = Object.freeze({ class: "", cost: 1 });

/** Policies whose text a {@link RequestLimiter} keeps at most. */
const POLICY_TEXTS_MAX = 256;

/** Whether `value` is a promise or any thenable, as await would take it. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return ((typeof value === "object" && value !== null) || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function";
}

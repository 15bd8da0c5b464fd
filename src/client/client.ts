/**
 * A client of the rateguard sidecar, over `fetch`: checks on the request
 * path with a short timeout and a choice of what a failure means, and the
 * admin calls with a longer one. The exchange itself is `transport.ts`'s;
 * the shapes it takes and gives are `types.ts`'s, its errors `errors.ts`'s.
 *
 * Why this file is over 400 lines: it is one class, whose public methods
 * are the sidecar's routes one for one (check, batch, peek, the three
 * operations, acquire, readiness, and the admin routes of classes, key
 * limits, shadows and the dry run), each a few lines over the transport
 * with its documentation (what it sends, returns and throws: half the
 * file). A service holds one client; spreading its methods over modules
 * would take a second class and methods that forward to it, documented
 * twice.
 *
 * @module
 */

import { Limit } from "../core/limit.ts";
import { messageOf } from "../core/errors.ts";
import { type BatchItem, type CheckOptions, classOf, type KeyOptions } from "../core/options.ts";
import { type AcquireOptions, Retrier } from "../runtime/acquire.ts";
import { ClientError, ClientUnavailableError } from "./errors.ts";
import { positive, SidecarHttp } from "./transport.ts";
import type {
  ClientBatchDecision,
  ClientDecision,
  ClientKeyLimitEntry,
  ClientLimitEntry,
  ClientOptions,
  FailurePolicy,
  LimitSpec,
} from "./types.ts";

interface Wire {
  allowed: boolean;
  remaining: number;
  retryAfterMs: number | null;
  resetMs: number;
}

/**
 * A client of the sidecar. `fetch` keeps connections to it alive, so a
 * check costs one round trip on loopback.
 *
 * @example
 * ```ts ignore
 * import { Client } from "@rateguard/guard/client";
 *
 * const client = new Client({ url: "http://127.0.0.1:7947", onFailure: "open" });
 * const decision = await client.check("tenant:42", { class: "pro" });
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 */
export class Client {
  readonly #http: SidecarHttp;
  readonly #onFailure: FailurePolicy;
  readonly #waiters = new Retrier();

  /**
   * A client of the sidecar at `options.url`.
   *
   * @param options Where the sidecar is, how long to wait, what a failure means.
   * @throws {TypeError} when `url` is not an http(s) URL.
   * @throws {RangeError} when a timeout is not a positive number of ms, or
   *   `onFailure` not one of its values.
   */
  constructor(options: ClientOptions = {}) {
    this.#http = new SidecarHttp(options);
    this.#onFailure = options.onFailure ?? "open";
    if (!["open", "closed", "throw"].includes(this.#onFailure)) {
      throw new RangeError(
        `Client: onFailure must be "open", "closed" or "throw", got ${
          JSON.stringify(this.#onFailure)
        }`,
      );
    }
  }

  /**
   * Checks a request for `key`, consuming it if admitted.
   *
   * @param key The key, a non-empty string.
   * @param options The class (the default class when left out) and the cost, as the guard's.
   * @returns The decision; the failure policy's when the sidecar cannot be asked.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked. Only under `onFailure: "throw"`.
   */
  async check(key: string, options: CheckOptions = {}): Promise<ClientDecision> {
    const body = { key: checkKey(key), class: options.class ?? "", cost: options.cost ?? 1 };
    try {
      return decision(await this.#http.call<Wire>("POST", "/v1/check", { body }));
    } catch (e) {
      return this.#failed(e);
    }
  }

  /**
   * Checks several keys at once, all or nothing.
   *
   * @param items The checks, each a key with its class and cost.
   * @returns The batch's decision, with one per item.
   * @throws {TypeError} when an item's key is not a non-empty string.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked. Only under `onFailure: "throw"`.
   */
  async checkAll(items: readonly BatchItem[]): Promise<ClientBatchDecision> {
    const body = {
      items: items.map((i) => ({ key: checkKey(i.key), class: i.class ?? "", cost: i.cost ?? 1 })),
    };
    try {
      const wire = await this.#http.call<Wire & { decisions: Wire[] }>("POST", "/v1/check-all", {
        body,
      });
      return { ...decision(wire), decisions: wire.decisions.map(decision) };
    } catch (e) {
      const failed = this.#failed(e);
      return { ...failed, decisions: items.map(() => failed) };
    }
  }

  /**
   * What the next check of `key` would say; consumes nothing.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns What a check would decide now; the failure policy's when the sidecar cannot be asked.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked. Only under `onFailure: "throw"`.
   */
  async peek(key: string, options: KeyOptions = {}): Promise<ClientDecision> {
    const query = new URLSearchParams({ class: options.class ?? "", key: checkKey(key) });
    try {
      return decision(await this.#http.call<Wire>("GET", `/v1/peek?${query}`));
    } catch (e) {
      return this.#failed(e);
    }
  }

  /**
   * Gives back what a check of `key` took (`POST /v1/refund`), as the
   * guard's `refund`: never more than the key still owes.
   *
   * @param key The key, a non-empty string.
   * @param options The class and the cost to give back (1 when left out).
   * @returns Whether the key's state changed on the sidecar.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked: no failure policy
   *   applies, as nothing is decided.
   */
  async refund(key: string, options: CheckOptions = {}): Promise<boolean> {
    const body = { key: checkKey(key), class: options.class ?? "", cost: options.cost ?? 1 };
    return (await this.#http.call<{ refunded: boolean }>("POST", "/v1/refund", {
      body,
      ops: true,
      once: true,
    })).refunded;
  }

  /**
   * Forgets what `key` owes on the sidecar, a block included (`POST /v1/reset`);
   * the operator's block (made with the admin token) only when this client
   * sends the admin token: else a `ClientError` 409 with code `OperatorBlock`.
   *
   * @param key The key, a non-empty string.
   * @param options The class; the default class when left out.
   * @returns Whether the sidecar had state for the key.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async reset(key: string, options: KeyOptions = {}): Promise<boolean> {
    const body = { key: checkKey(key), class: options.class ?? "" };
    return (await this.#http.call<{ reset: boolean }>("POST", "/v1/reset", { body, ops: true }))
      .reset;
  }

  /**
   * Denies every check of `key` on the sidecar for `ms` (`POST /v1/block`).
   *
   * @param key The key, a non-empty string.
   * @param ms How long, above 0 and at most a year.
   * @param options The class; the default class when left out.
   * @returns Whether it is blocked: true from this version's sidecar, whose blocks live in a set
   *   of their own (`--max-blocks`); false from an older one whose key table had no place for it.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `ms` is not a positive number.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async block(key: string, ms: number, options: KeyOptions = {}): Promise<boolean> {
    const body = { key: checkKey(key), class: options.class ?? "", ms: positive(ms, "ms") };
    return (await this.#http.call<{ blocked: boolean }>("POST", "/v1/block", { body, ops: true }))
      .blocked;
  }

  /**
   * Waits until a check of `key` is admitted, then takes it, within the
   * guard's `acquire` bounds but with no line: each denial's `retryAfterMs`
   * is slept and the sidecar asked again (each a check it counts), at most `maxWaitMs` in
   * all (10 s by default), at most 4,096 callers of this client at once
   * (one more gets its denial at once), cancellable with `signal`. A check
   * the failure policy answers ends the wait with that answer.
   *
   * @param key The key, a non-empty string.
   * @param options The class, the cost, a signal, and the longest wait.
   * @returns The admission, or the denial when it cannot come in time.
   * @throws {TypeError} when `key` is not a non-empty string; rejects with the signal's reason
   *   when aborted.
   * @throws {RangeError} when `maxWaitMs` is out of range.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   */
  acquire(key: string, options: AcquireOptions = {}): Promise<ClientDecision> {
    const check = { class: options.class, cost: options.cost };
    return this.#waiters.acquire(() => this.check(key, check), options, () => performance.now());
  }

  /**
   * Whether the sidecar is ready: running, and joined to its fleet or standalone.
   *
   * @returns Whether `/readyz` answered 2xx; false when it could not be asked.
   */
  async ready(): Promise<boolean> {
    return await this.#http.ready();
  }

  /**
   * The sidecar's stats.
   *
   * @returns The sidecar's `/v1/stats`, as JSON.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  stats(): Promise<Record<string, unknown>> {
    return this.#admin("GET", "/v1/stats");
  }

  /**
   * Every class with its limit, the default class (`""`) first.
   *
   * @returns The classes.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async classes(): Promise<ClientLimitEntry[]> {
    return (await this.#admin<{ classes: ClientLimitEntry[] }>("GET", "/v1/classes")).classes;
  }

  /**
   * Adds or changes a class; `""` is the default class.
   *
   * @param name The class.
   * @param limit Its limit.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async setClass(name: string, limit: LimitSpec): Promise<void> {
    await this.#admin(
      "PUT",
      `/v1/classes?${new URLSearchParams({ class: name })}`,
      limitJson(limit),
    );
  }

  /**
   * Removes a class; false if there was none of that name.
   *
   * @param name The class.
   * @returns Whether there was such a class.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  removeClass(name: string): Promise<boolean> {
    return this.#remove(`/v1/classes?${new URLSearchParams({ class: name })}`);
  }

  /**
   * Every key limit.
   *
   * @returns The key limits.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async keyLimits(): Promise<ClientKeyLimitEntry[]> {
    return (await this.#admin<{ keyLimits: ClientKeyLimitEntry[] }>("GET", "/v1/key-limits"))
      .keyLimits;
  }

  /**
   * Gives a key of a class its own limit, or `{ follows: "pro" }` that of another class.
   *
   * @param key The key.
   * @param limit Its limit, or `{ follows }` a class's.
   * @param options The key's class; the default class when left out.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async setKeyLimit(
    key: string,
    limit: LimitSpec | { readonly follows: string },
    options: KeyOptions = {},
  ): Promise<void> {
    const query = new URLSearchParams({
      class: classOf(options, "setKeyLimit"),
      key: checkKey(key),
    });
    const body = typeof limit === "object" && "follows" in limit ? limit : limitJson(limit);
    await this.#admin("PUT", `/v1/key-limits?${query}`, body);
  }

  /**
   * Removes a key's own limit; false if it had none.
   *
   * @param key The key.
   * @param options The key's class; the default class when left out.
   * @returns Whether the key had a limit of its own.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  removeKeyLimit(key: string, options: KeyOptions = {}): Promise<boolean> {
    const query = new URLSearchParams({ class: classOf(options, "removeKeyLimit"), key });
    return this.#remove(`/v1/key-limits?${query}`);
  }

  /**
   * Every shadow limit.
   *
   * @returns The shadows.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async shadows(): Promise<ClientLimitEntry[]> {
    return (await this.#admin<{ shadows: ClientLimitEntry[] }>("GET", "/v1/shadows")).shadows;
  }

  /**
   * Gives a class a shadow limit, or removes it with `null`.
   *
   * @param className The class.
   * @param limit The shadow, or `null` to remove it.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async setShadow(className: string, limit: LimitSpec | null): Promise<void> {
    const path = `/v1/shadows?${new URLSearchParams({ class: className })}`;
    if (limit === null) await this.#remove(path);
    else await this.#admin("PUT", path, limitJson(limit));
  }

  /**
   * Whether the sidecar runs a dry run.
   *
   * @returns Whether it runs dry.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async dryRun(): Promise<boolean> {
    return (await this.#admin<{ dryRun: boolean }>("GET", "/v1/dry-run")).dryRun;
  }

  /**
   * Turns the dry run on or off.
   *
   * @param on Whether to run dry.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async setDryRun(on: boolean): Promise<void> {
    await this.#admin("PUT", "/v1/dry-run", { dryRun: on });
  }

  #admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    return this.#http.call<T>(method, path, { body, admin: true });
  }

  async #remove(path: string): Promise<boolean> {
    try {
      await this.#admin("DELETE", path);
      return true;
    } catch (e) {
      if (e instanceof ClientError && e.status === 404) return false;
      throw e;
    }
  }

  #failed(e: unknown): ClientDecision {
    // A refusal is the caller's mistake, never a reason to admit or deny.
    if (e instanceof ClientError || this.#onFailure === "throw") throw e;
    const failure = e instanceof ClientUnavailableError
      ? e
      : new ClientUnavailableError("BadResponse", `rateguard sidecar: ${messageOf(e)}`, {
        cause: e,
      });
    return this.#onFailure === "open"
      ? { allowed: true, remaining: 0, retryAfterMs: 0, resetMs: 0, failure }
      : { allowed: false, remaining: 0, retryAfterMs: 1_000, resetMs: 1_000, failure };
  }
}

function decision(w: Wire): ClientDecision {
  return {
    allowed: w.allowed,
    remaining: w.remaining,
    retryAfterMs: w.retryAfterMs ?? Infinity,
    resetMs: w.resetMs,
  };
}

function limitJson(limit: LimitSpec): { limit: string; burst?: number } {
  if (typeof limit === "string") return { limit };
  if (limit instanceof Limit) return limit.toJSON();
  return limit;
}

function checkKey(key: string): string {
  if (typeof key !== "string" || key === "") {
    throw new TypeError(`Client: a key must be a non-empty string, got ${JSON.stringify(key)}`);
  }
  return key;
}

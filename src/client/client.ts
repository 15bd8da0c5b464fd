/**
 * A client of the rateguard sidecar, over `fetch`: checks on the request
 * path with a short timeout and a choice of what a failure means, and the
 * admin calls with a longer one.
 *
 * @module
 */

import { Limit } from "../core/limit.ts";
import { messageOf, OperationalError } from "../core/errors.ts";
import { limitBody } from "../http/body.ts";
import type { BatchItem, CheckOptions, KeyOptions } from "../core/options.ts";
import { type AcquireOptions, Waiters } from "../runtime/acquire.ts";

export type { BatchItem, CheckOptions, KeyOptions } from "../core/options.ts";

/** A decision as the client returns it. */
export interface ClientDecision {
  /** Whether the request is admitted. */
  readonly allowed: boolean;
  /** Requests of cost 1 admitted back to back now. */
  readonly remaining: number;
  /** Milliseconds before a retry may be admitted; `Infinity` if never. */
  readonly retryAfterMs: number;
  /** Milliseconds until the full burst is back. */
  readonly resetMs: number;
  /** Set when the sidecar could not be asked, and the decision is the failure policy's. */
  readonly failure?: ClientUnavailableError;
}

/** A batch's decision, and one per item in order. */
export interface ClientBatchDecision extends ClientDecision {
  /** One decision per item; all allowed, or nothing consumed. */
  readonly decisions: readonly ClientDecision[];
}

/** What a check answers when the sidecar cannot be asked. */
export type FailurePolicy = "open" | "closed" | "throw";

/** Options of a {@link Client}. */
export interface ClientOptions {
  /**
   * The sidecar.
   *
   * @default {"http://127.0.0.1:7947"}
   */
  readonly url?: string;
  /**
   * How long a check may take, ms: the sidecar is on loopback.
   *
   * @default {50}
   */
  readonly timeoutMs?: number;
  /**
   * How long an admin call may take, ms.
   *
   * @default {5000}
   */
  readonly adminTimeoutMs?: number;
  /**
   * How long the client's first call may spend setting up its connection,
   * ms, before the call's own timeout starts: it first sends `/healthz` a
   * request (answered 405, changing nothing), which opens the kept-alive
   * connection the checks then use. On Node the
   * first fetch of a process also loads its HTTP parser, about 50 ms, as
   * long as a check's whole default timeout.
   *
   * @default {1000}
   */
  readonly connectTimeoutMs?: number;
  /**
   * When a check times out, cannot connect, or gets a 5xx: `"open"` admits,
   * `"closed"` denies with a retry in a second, `"throw"` rejects. The
   * decision carries the {@link ClientUnavailableError} in `failure`.
   *
   * @default {"open"}
   */
  readonly onFailure?: FailurePolicy;
  /**
   * The admin token, sent as `Authorization: Bearer` on admin calls.
   *
   * @default {none}
   */
  readonly adminToken?: string;
}

/** A limit for the admin calls: a {@link Limit}, its text (`"10/s"`), or text and burst. */
export type LimitSpec = Limit | string | { readonly limit: string; readonly burst?: number };

/** A limit as the sidecar lists it. */
export interface ClientLimitEntry {
  /** The class, `""` for the default. */
  readonly class: string;
  /** Count and period, such as `10/s`. */
  readonly limit: string;
  /** The burst as it applies. */
  readonly burst: number;
}

/** A key limit as the sidecar lists it: a limit of its own, or the class it follows. */
export interface ClientKeyLimitEntry {
  /** The class. */
  readonly class: string;
  /** The key. */
  readonly key: string;
  /** Its own limit, if it has one. */
  readonly limit?: string;
  /** Its own burst, with `limit`. */
  readonly burst?: number;
  /** The class it follows, if it follows one. */
  readonly follows?: string;
}

/** The sidecar refused a request (4xx): the problem it answered with. */
export class ClientError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem body, with `detail`, `field` and perhaps `code`. */
  readonly problem: Readonly<Record<string, unknown>>;

  /**
   * An error for a refused request.
   *
   * @param status The HTTP status, 4xx.
   * @param problem The problem body the sidecar answered with.
   */
  constructor(status: number, problem: Readonly<Record<string, unknown>>) {
    super(`rateguard sidecar: ${status} ${String(problem.detail ?? problem.title ?? "")}`);
    this.name = "ClientError";
    this.status = status;
    this.problem = problem;
  }
}

/** The stable codes of {@link ClientUnavailableError}. */
export type ClientUnavailableCode =
  /** No answer within the timeout. */
  | "Timeout"
  /** No connection: refused, reset, or no route. */
  | "Unreachable"
  /** The sidecar answered 5xx. */
  | "ServerError"
  /** The sidecar answered with a body that is not what it sends. */
  | "BadResponse";

/**
 * The sidecar could not be asked, an operational failure: what a check's
 * `failure` holds under `onFailure: "open"` or `"closed"`, and what it
 * throws under `"throw"`, as the admin calls do.
 */
export class ClientUnavailableError extends OperationalError {
  /** What went wrong, stable across versions. */
  declare readonly code: ClientUnavailableCode;

  /**
   * A failure to ask the sidecar.
   *
   * @param code What went wrong.
   * @param message For people.
   * @param options `cause`: the error of `fetch`, if any.
   */
  constructor(code: ClientUnavailableCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
    this.name = "ClientUnavailableError";
  }
}

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
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #adminTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  #connected: Promise<void> | undefined;
  readonly #onFailure: FailurePolicy;
  readonly #waiters = new Waiters();
  readonly #auth: Record<string, string>;

  /**
   * A client of the sidecar at `options.url`.
   *
   * @param options Where the sidecar is, how long to wait, what a failure means.
   * @throws {TypeError} when `url` is not an http(s) URL.
   * @throws {RangeError} when a timeout is not a positive number of ms, or
   *   `onFailure` not one of its values.
   */
  constructor(options: ClientOptions = {}) {
    const url = options.url ?? "http://127.0.0.1:7947";
    if (!/^https?:\/\/[^/]+/.test(url)) {
      throw new TypeError(`Client: url must be http(s)://host:port, got ${JSON.stringify(url)}`);
    }
    this.#url = url.replace(/\/+$/, "");
    this.#timeoutMs = positive(options.timeoutMs ?? 50, "timeoutMs");
    this.#adminTimeoutMs = positive(options.adminTimeoutMs ?? 5_000, "adminTimeoutMs");
    this.#connectTimeoutMs = positive(options.connectTimeoutMs ?? 1_000, "connectTimeoutMs");
    this.#onFailure = options.onFailure ?? "open";
    if (!["open", "closed", "throw"].includes(this.#onFailure)) {
      throw new RangeError(
        `Client: onFailure must be "open", "closed" or "throw", got ${
          JSON.stringify(this.#onFailure)
        }`,
      );
    }
    this.#auth = options.adminToken === undefined
      ? {}
      : { authorization: `Bearer ${options.adminToken}` };
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
      return decision(await this.#call<Wire>("POST", "/v1/check", { body }));
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
      const wire = await this.#call<Wire & { decisions: Wire[] }>("POST", "/v1/check-all", {
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
      return decision(await this.#call<Wire>("GET", `/v1/peek?${query}`));
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
    return (await this.#call<{ refunded: boolean }>("POST", "/v1/refund", { body })).refunded;
  }

  /**
   * Forgets what `key` owes on the sidecar, a block included (`POST /v1/reset`).
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
    return (await this.#call<{ reset: boolean }>("POST", "/v1/reset", { body })).reset;
  }

  /**
   * Denies every check of `key` on the sidecar for `ms` (`POST /v1/block`).
   *
   * @param key The key, a non-empty string.
   * @param ms How long, above 0 and at most a year.
   * @param options The class; the default class when left out.
   * @returns Whether it is blocked: false when the sidecar's key table had no place for it.
   * @throws {TypeError} when `key` is not a non-empty string.
   * @throws {RangeError} when `ms` is not a positive number.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async block(key: string, ms: number, options: KeyOptions = {}): Promise<boolean> {
    const body = { key: checkKey(key), class: options.class ?? "", ms: positive(ms, "ms") };
    return (await this.#call<{ blocked: boolean }>("POST", "/v1/block", { body })).blocked;
  }

  /**
   * Waits until a check of `key` is admitted, then takes it, as the guard's
   * `acquire`: each denial's `retryAfterMs` is slept, at most `maxWaitMs` in
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
    try {
      const res = await fetch(`${this.#url}/readyz`, {
        signal: AbortSignal.timeout(this.#adminTimeoutMs),
      });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
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
   * @param className The key's class.
   * @param key The key.
   * @param limit Its limit, or `{ follows }` a class's.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  async setKeyLimit(
    className: string,
    key: string,
    limit: LimitSpec | { readonly follows: string },
  ): Promise<void> {
    const query = new URLSearchParams({ class: className, key: checkKey(key) });
    const body = typeof limit === "object" && "follows" in limit ? limit : limitJson(limit);
    await this.#admin("PUT", `/v1/key-limits?${query}`, body);
  }

  /**
   * Removes a key's own limit; false if it had none.
   *
   * @param className The key's class.
   * @param key The key.
   * @returns Whether the key had a limit of its own.
   * @throws {ClientError} when the sidecar refuses the request (4xx), naming the problem.
   * @throws {ClientUnavailableError} when the sidecar cannot be asked.
   */
  removeKeyLimit(className: string, key: string): Promise<boolean> {
    return this.#remove(`/v1/key-limits?${new URLSearchParams({ class: className, key })}`);
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
    return this.#call<T>(method, path, { body, admin: true });
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

  async #call<T>(
    method: string,
    path: string,
    options: { body?: unknown; admin?: boolean } = {},
  ): Promise<T> {
    const timeoutMs = options.admin ? this.#adminTimeoutMs : this.#timeoutMs;
    await (this.#connected ??= this.#connect());
    const where = `${method} ${this.#url}${path.replace(/\?.*/, "")}`;
    let res: Response;
    let payload;
    try {
      res = await fetch(`${this.#url}${path}`, {
        method,
        headers: {
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...(options.admin ? this.#auth : {}),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      payload = await res.json().catch(() => undefined);
    } catch (e) {
      const timedOut = (e as { name?: unknown } | null)?.name === "TimeoutError";
      throw new ClientUnavailableError(
        timedOut ? "Timeout" : "Unreachable",
        timedOut
          ? `rateguard sidecar: no answer to ${where} within ${timeoutMs} ms`
          : `rateguard sidecar: cannot reach ${where}: ${messageOf(e)}`,
        { cause: e },
      );
    }
    if (res.status >= 400 && res.status < 500) {
      throw new ClientError(res.status, payload ?? { detail: res.statusText });
    }
    if (!res.ok) {
      throw new ClientUnavailableError(
        "ServerError",
        `rateguard sidecar: ${res.status} from ${where}: ${payload?.detail ?? res.statusText}`,
      );
    }
    if (payload === null || typeof payload !== "object") {
      throw new ClientUnavailableError(
        "BadResponse",
        `rateguard sidecar: ${where} answered ${res.status} without a JSON object`,
      );
    }
    return payload as T;
  }

  /**
   * Opens the connection once, outside any call's timeout. Whatever comes
   * of it, the calls go on: one that cannot reach the sidecar fails on its own.
   */
  async #connect(): Promise<void> {
    try {
      // A POST with a JSON body, the shape of a check, so that every path a
      // check takes has run once; the sidecar answers it 405 and changes nothing.
      const res = await fetch(`${this.#url}/healthz`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(this.#connectTimeoutMs),
      });
      await res.body?.cancel();
    } catch {
      // Unreachable or slow: the call that follows says so.
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
  if (limit instanceof Limit) return limitBody(limit);
  return limit;
}

function checkKey(key: string): string {
  if (typeof key !== "string" || key === "") {
    throw new TypeError(`Client: a key must be a non-empty string, got ${JSON.stringify(key)}`);
  }
  return key;
}

function positive(ms: number, what: string): number {
  if (typeof ms !== "number" || !(ms > 0) || !Number.isFinite(ms)) {
    throw new RangeError(`Client: ${what} must be a positive number of ms, got ${ms}`);
  }
  return ms;
}

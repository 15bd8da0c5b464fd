/**
 * The sidecar's client on the wire: one HTTP exchange with its timeout
 * (short for a check, longer for an admin call), the admin token, the
 * connection opened ahead of the first call, and the answers turned into
 * a JSON object or the error that says why there is none. What a failure
 * means for a decision is the client's to say.
 *
 * @module
 */

import { messageOf } from "../core/errors.ts";
import { ClientError, ClientUnavailableError } from "./errors.ts";
import type { ClientOptions } from "./types.ts";

/** Sends of one request, at most, when the connection fails before an answer (see `#fetch`). */
const ATTEMPTS = 3;

/** The sidecar at one URL, with the client's timeouts and token. */
export class SidecarHttp {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #adminTimeoutMs: number;
  readonly #connectTimeoutMs: number;
  #connected: Promise<void> | undefined;
  readonly #auth: Record<string, string>;
  readonly #opsAuth: Record<string, string>;

  /**
   * The sidecar at `options.url`.
   *
   * @param options The client's options; `onFailure` is not read here.
   * @throws {TypeError} when `url` is not an http(s) URL.
   * @throws {RangeError} when a timeout is not a positive number of ms.
   */
  constructor(options: ClientOptions) {
    const url = options.url ?? "http://127.0.0.1:7947";
    if (!/^https?:\/\/[^/]+/.test(url)) {
      throw new TypeError(`Client: url must be http(s)://host:port, got ${JSON.stringify(url)}`);
    }
    this.#url = url.replace(/\/+$/, "");
    this.#timeoutMs = positive(options.timeoutMs ?? 50, "timeoutMs");
    this.#adminTimeoutMs = positive(options.adminTimeoutMs ?? 5_000, "adminTimeoutMs");
    this.#connectTimeoutMs = positive(options.connectTimeoutMs ?? 1_000, "connectTimeoutMs");
    this.#auth = bearer(options.adminToken);
    // An operator's client holds the admin token alone: its blocks are the operator's.
    this.#opsAuth = bearer(options.opsToken ?? options.adminToken);
  }

  /**
   * Whether `/readyz` answers 2xx, within the admin timeout.
   *
   * @returns Whether it does; false when it could not be asked.
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
   * One exchange with the sidecar, within the check's timeout or, for an
   * admin call, the admin timeout and with the admin token; an operation
   * (refund, reset, block) goes with the ops token, or the admin token
   * when the client has no ops token.
   *
   * @param method The HTTP method.
   * @param path The path and query.
   * @param options The JSON body, if any, whether it is an admin call or an
   *   operation, and whether it must be sent at most once (see `#fetch`).
   * @returns The JSON object the sidecar answered with.
   * @throws {ClientError} on a 4xx.
   * @throws {ClientUnavailableError} when it cannot be asked, answers 5xx or no JSON object.
   */
  async call<T>(
    method: string,
    path: string,
    options: { body?: unknown; admin?: boolean; ops?: boolean; once?: boolean } = {},
  ): Promise<T> {
    const timeoutMs = options.admin ? this.#adminTimeoutMs : this.#timeoutMs;
    await (this.#connected ??= this.#connect());
    const where = `${method} ${this.#url}${path.replace(/\?.*/, "")}`;
    const init: RequestInit = {
      method,
      headers: {
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...(options.admin ? this.#auth : options.ops ? this.#opsAuth : {}),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      // One deadline for the call, a second attempt included.
      signal: AbortSignal.timeout(timeoutMs),
    };
    let res: Response;
    let payload;
    try {
      res = await this.#fetch(`${this.#url}${path}`, init, options.once === true);
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
   * `fetch`, sent again when it fails before any answer and before the
   * deadline, up to {@link ATTEMPTS} times in all. A kept-alive connection
   * can be closed by the sidecar (its idle timeout) just as a request goes
   * out on it, and the runtimes' pools do not all send it again (Bun's and
   * Node's do not); each failed attempt takes one such connection out of
   * the pool, and a pool may hold several. A request the sidecar had
   * already acted on is acted on twice: for a check, counted twice (the
   * strict side, never an extra admission); a refund, which twice would
   * admit more, is sent once (`once`).
   */
  async #fetch(url: string, init: RequestInit, once: boolean): Promise<Response> {
    for (let attempt = 1;; attempt++) {
      try {
        return await fetch(url, init);
      } catch (e) {
        if (once || attempt >= ATTEMPTS || init.signal?.aborted) throw e;
      }
    }
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
}

/** The header that carries `token`, if there is one. */
function bearer(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/**
 * Checks a duration the client is given.
 *
 * @param ms What the caller gave.
 * @param what The option or argument, named in the error.
 * @returns `ms`, a positive finite number.
 * @throws {RangeError} when it is not one.
 */
export function positive(ms: number, what: string): number {
  if (typeof ms !== "number" || !(ms > 0) || !Number.isFinite(ms)) {
    throw new RangeError(`Client: ${what} must be a positive number of ms, got ${ms}`);
  }
  return ms;
}

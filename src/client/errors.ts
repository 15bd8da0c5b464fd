/**
 * How a call of the sidecar's client fails: the sidecar refused it (a 4xx,
 * the caller's mistake, {@link ClientError}), or it could not be asked (an
 * operational failure with a stable code, {@link ClientUnavailableError}).
 *
 * @module
 */

import { OperationalError } from "../core/errors.ts";

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

/**
 * Ledger failures: always fail closed, and say whether quota may have been
 * consumed.
 *
 * @module
 */

import { OperationalError } from "../core/errors.ts";

/** The stable codes of {@link LedgerError}. */
export type LedgerErrorCode =
  /** No answer from the database: connecting failed, or the connection was lost. */
  | "Unavailable"
  /** The database refused the operation (a timeout, a lock wait, a permission). */
  | "DatabaseError"
  /** The ledger's tables or functions are missing: run `migrate()`. */
  | "SchemaMissing"
  /** The ledger was closed. */
  | "Closed";

/**
 * A check or cleanup that could not be decided. Treat it as a denial (fail
 * closed); it is distinct from a quota denial, which is a normal decision.
 *
 * `mayHaveConsumed` is true only when the connection was lost while the
 * check was in flight, so its commit's outcome never came back: the units
 * may be counted. Do not blindly retry such a check as part of a
 * non-idempotent operation. When it is false (the database refused, or the
 * check never left), nothing was consumed and a retry is safe.
 *
 * Messages name the operation and the database's SQLSTATE, never a subject:
 * subjects are hashed before any SQL is built.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LedgerError } from "@rateguard/guard/postgres";
 *
 * const error = new LedgerError("Unavailable", "check: connection refused", {
 *   mayHaveConsumed: false,
 * });
 * assert(error.code === "Unavailable" && !error.mayHaveConsumed);
 * ```
 */
export class LedgerError extends OperationalError {
  /** What went wrong, stable across versions. */
  declare readonly code: LedgerErrorCode;
  /** Whether the operation may have consumed quota (its commit's outcome is unknown). */
  readonly mayHaveConsumed: boolean;
  /** The database's SQLSTATE when it reported one, such as `"57014"` (statement timeout). */
  readonly sqlState: string | undefined;

  /**
   * An error with a stable code; `cause` keeps the driver's error for diagnosis.
   *
   * @param code What went wrong.
   * @param message For people: the operation and the SQLSTATE, never a subject.
   * @param options Whether quota may have been consumed, the SQLSTATE, and the driver's error as `cause`.
   */
  constructor(
    code: LedgerErrorCode,
    message: string,
    options: { mayHaveConsumed: boolean; sqlState?: string; cause?: unknown },
  ) {
    super(code, message, { cause: options.cause });
    this.name = "LedgerError";
    this.mayHaveConsumed = options.mayHaveConsumed;
    this.sqlState = options.sqlState;
  }
}

// What the driver tells us, read structurally so this module needs no
// import of it: PostgresError carries `severity` and a five-character SQLSTATE
// in `code`; connection failures carry a word in `code`.
interface DriverError {
  readonly code?: unknown;
  readonly severity?: unknown;
}

// undefined_table, undefined_function, invalid_schema_name.
const SCHEMA_MISSING = new Set(["42P01", "42883", "3F000"]);

/** The SQLSTATE of a server-reported error, if `error` is one. */
function sqlStateOf(error: unknown): string | undefined {
  const { code, severity } = (error ?? {}) as DriverError;
  return typeof severity === "string" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)
    ? code
    : undefined;
}

/** Whether the server reported `error` as ending the session (FATAL or PANIC). */
export function endedSession(error: unknown): boolean {
  const { severity } = (error ?? {}) as DriverError;
  return severity === "FATAL" || severity === "PANIC";
}

// Raised only before the driver wrote the query: nothing reached the
// server. (CONNECTION_CLOSED and CONNECTION_DESTROYED are not here: the
// driver also raises them for queries already written.)
const NOT_SENT = new Set(["CONNECT_TIMEOUT", "CONNECTION_ENDED", "ECONNREFUSED", "ENOTFOUND"]);

/**
 * Whether a single-statement transaction that failed with `error` may have
 * committed. Not when the server answered with an ERROR (the statement
 * rolled back), nor with a FATAL (postgres.js delivers those only before
 * it sends a query: a refused login, or the stale error of a connection the
 * server killed), nor when the query never left; yes when the connection
 * was lost with the statement in flight.
 */
export function mayHaveCommitted(error: unknown): boolean {
  if (sqlStateOf(error) !== undefined) return false;
  const { code } = (error ?? {}) as DriverError;
  return !(typeof code === "string" && NOT_SENT.has(code));
}

/**
 * Wraps a driver error. `mayHaveConsumed` (default false) is the caller's
 * judgement, made from where in the transaction the error struck.
 */
export function ledgerError(
  operation: string,
  error: unknown,
  options: { readonly mayHaveConsumed?: boolean } = {},
): LedgerError {
  const mayHaveConsumed = options.mayHaveConsumed ?? false;
  const sqlState = sqlStateOf(error);
  if (sqlState === undefined || endedSession(error)) {
    const what = sqlState === undefined ? driverWord(error) : `session ended (${sqlState})`;
    return new LedgerError(
      "Unavailable",
      `${operation}: database unavailable: ${what}${
        mayHaveConsumed ? "; the commit's outcome is unknown" : ""
      }`,
      { mayHaveConsumed, sqlState, cause: error },
    );
  }
  const code = SCHEMA_MISSING.has(sqlState) ? "SchemaMissing" : "DatabaseError";
  const hint = code === "SchemaMissing" ? " (run migrate() first)" : "";
  return new LedgerError(code, `${operation}: database error ${sqlState}${hint}`, {
    mayHaveConsumed,
    sqlState,
    cause: error,
  });
}

function driverWord(error: unknown): string {
  const { code } = (error ?? {}) as DriverError;
  return typeof code === "string" ? code : error instanceof Error ? error.name : "unknown error";
}

/**
 * The ledger: exact fixed-window quotas shared by every replica through one
 * PostgreSQL database.
 *
 * @module
 */

import postgres from "postgres";
import { type BatchParams, prepareBatch } from "./batch.ts";
import {
  type CheckRow,
  type QuotaBatchDecision,
  type QuotaCheck,
  type QuotaDecision,
  toQuotaBatchDecision,
} from "./decision.ts";
import { endedSession, LedgerError, ledgerError, mayHaveCommitted } from "./errors.ts";
import type { KeyHasher } from "./keys.ts";
import type { FixedWindowPolicy } from "./policy.ts";
import {
  capacityStatement,
  checkStatement,
  cleanupStatement,
  DEFAULT_SCHEMA,
  MAX_ROWS_PER_SHARD,
  migrationSql,
  quoteSchema,
  SHARD_COUNT,
} from "./schema.ts";

/** The rows per shard a ledger allows unless told otherwise (about a million rows in all). */
export const DEFAULT_MAX_ROWS_PER_SHARD = 4_096;

/** The most rows one `cleanupExpired` call may delete: keeps each call's transaction short. */
export const MAX_CLEANUP_ROWS = 100_000;

/** A postgres.js client (`postgres(url, options)`), whose pool and timeouts are the caller's. */
export type LedgerSql = postgres.Sql;

/** How a {@link PostgresLedger} stores and bounds its state. */
export interface PostgresLedgerOptions {
  /** Hashes subjects into the keys the database stores; the same secret on every replica. */
  readonly hasher: KeyHasher;
  /**
   * The schema holding the ledger's tables (a lowercase identifier).
   *
   * @default {"public"}
   */
  readonly schema?: string;
  /**
   * The most keys one of the 256 shards may hold, 1 to 65,536. A new key beyond it
   * is denied with `"StorageCapacity"`.
   *
   * @default {4096 (DEFAULT_MAX_ROWS_PER_SHARD)}
   */
  readonly maxRowsPerShard?: number;
}

/** How full the ledger is, for dashboards and alerts. */
export interface LedgerCapacity {
  /** Keys stored, live or expired but not yet cleaned up. */
  readonly rows: number;
  /** Keys in the fullest shard: new keys there are denied once it reaches `maxRowsPerShard`. */
  readonly fullestShardRows: number;
  /** This ledger's bound per shard. */
  readonly maxRowsPerShard: number;
  /** The bound over all shards. */
  readonly maxRows: number;
}

/**
 * Exact quotas on PostgreSQL: a check admits a request only if the shared
 * count for its key has room, so a quota is never exceeded, however many
 * replicas check at once. Use it for limits where one extra request has a
 * price (daily or monthly quotas, billing, prepaid plans); put the gossip
 * `Guard` in front of it as a cheap first gate.
 *
 * A check is one statement, one transaction and one round trip: the
 * database locks the batch's keys in a fixed order, reads the counts,
 * decides with its own clock, and writes only if every check passes. Errors
 * fail closed with a {@link LedgerError} that says whether quota may have
 * been consumed. The ledger's sessions must run in READ COMMITTED,
 * PostgreSQL's default isolation level.
 *
 * @example
 * ```ts ignore
 * import postgres from "postgres";
 * import { FixedWindowPolicy, KeyHasher, PostgresLedger } from "@rateguard/guard/postgres";
 *
 * const sql = postgres("postgres://app@db.internal/app", { max: 8 });
 * // At least 32 random bytes from secret storage, the same on every replica.
 * const hasher = await KeyHasher.fromSecret(await loadSecret("rateguard-key"));
 * const ledger = new PostgresLedger(sql, { hasher, schema: "quotas" });
 * await ledger.migrate();
 *
 * const daily = new FixedWindowPolicy({
 *   id: "api.calls", scope: "tenant", limit: 10_000, windowMs: 86_400_000,
 * });
 * const decision = await ledger.check(daily, "tenant:42");
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 */
export class PostgresLedger {
  readonly #sql: LedgerSql;
  readonly #hasher: KeyHasher;
  readonly #schema: string;
  readonly #maxRowsPerShard: number;
  readonly #checkText: string;
  #owned = false;
  #closed = false;

  /**
   * A ledger over `sql`, a postgres.js client the caller owns (and ends).
   *
   * @throws {TypeError} for a missing hasher or a schema that is not a plain identifier.
   * @throws {RangeError} for `maxRowsPerShard` outside 1 to 65,536.
   *
   * @param sql A postgres.js client.
   * @param options The hasher, the schema and the bounds.
   */
  constructor(sql: LedgerSql, options: PostgresLedgerOptions) {
    if (typeof sql !== "function" || typeof sql.unsafe !== "function") {
      throw new TypeError("PostgresLedger: sql must be a postgres.js client");
    }
    if (typeof options?.hasher?.hexFor !== "function") {
      throw new TypeError("PostgresLedger: options.hasher must be a KeyHasher");
    }
    const schema = options.schema ?? DEFAULT_SCHEMA;
    quoteSchema(schema);
    const maxRows = options.maxRowsPerShard ?? DEFAULT_MAX_ROWS_PER_SHARD;
    if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_ROWS_PER_SHARD) {
      throw new RangeError(
        `PostgresLedger: maxRowsPerShard must be a whole number from 1 to ${MAX_ROWS_PER_SHARD}, got ${
          String(maxRows)
        }`,
      );
    }
    this.#sql = sql;
    this.#hasher = options.hasher;
    this.#schema = schema;
    this.#maxRowsPerShard = maxRows;
    this.#checkText = checkStatement(schema);
  }

  /**
   * A ledger with its own connection pool to `url`; {@link close} ends it.
   * `connection` goes to postgres.js as it is (pool size, timeouts, TLS).
   *
   * @example
   * ```ts ignore
   * const ledger = PostgresLedger.connect("postgres://app@db/app", {
   *   hasher, connection: { max: 4, connect_timeout: 5 },
   * });
   * ```
   *
   * @param url The database's URL.
   * @param options As the constructor's, with `connection` for postgres.js.
   * @returns The ledger; it connects on first use.
   * @throws {TypeError} as the constructor.
   * @throws {RangeError} as the constructor.
   */
  static connect(
    url: string,
    options: PostgresLedgerOptions & { readonly connection?: postgres.Options<never> },
  ): PostgresLedger {
    if (typeof url !== "string") {
      throw new TypeError("PostgresLedger.connect: url must be a string");
    }
    const ledger = new PostgresLedger(postgres(url, options.connection), options);
    ledger.#owned = true;
    return ledger;
  }

  /** The schema holding the ledger's tables. */
  get schema(): string {
    return this.#schema;
  }

  /**
   * Creates or updates the ledger's tables and functions in its schema, in
   * one transaction. Idempotent: run it on every start, from every replica.
   */
  async migrate(): Promise<void> {
    this.#refuseIfClosed("migrate");
    try {
      await this.#sql.begin((tx) => tx.unsafe(migrationSql(this.#schema)));
    } catch (error) {
      throw ledgerError("migrate", error);
    }
  }

  /**
   * Counts `cost` units (default 1) of `policy` for `subject`, if the key's
   * window has room.
   *
   * @throws {TypeError} or {RangeError} for a caller mistake (see {@link checkAll}).
   * @throws {LedgerError} when the database could not decide: fail closed.
   *
   * @param policy The quota policy.
   * @param subject Whom it limits.
   * @param options `cost`: units to count (default 1).
   * @returns A promise of the decision.
   */
  async check(
    policy: FixedWindowPolicy,
    subject: string | Uint8Array,
    options: { readonly cost?: number } = {},
  ): Promise<QuotaDecision> {
    const batch = await this.checkAll([{ policy, subject, cost: options.cost }]);
    return batch.allowed ? batch.decisions[0] : batch.denial;
  }

  /**
   * Checks several quotas at once, all or nothing: either every check passes
   * and all are counted, or none is. Typical use: a per-user and a
   * per-organization quota on the same request.
   *
   * @throws {TypeError} for a malformed check or mixed enforced and shadow policies.
   * @throws {RangeError} for a bad cost, an empty batch or one over 64
   *   checks, or the same key twice.
   * @throws {LedgerError} when the database could not decide: fail closed.
   *
   * @param checks The checks: a policy, a subject and a cost each.
   * @returns A promise of the batch's decision, with one per check.
   */
  async checkAll(checks: readonly QuotaCheck[]): Promise<QuotaBatchDecision> {
    this.#refuseIfClosed("check");
    const params = await prepareBatch(checks, {
      hasher: this.#hasher,
      maxRowsPerShard: this.#maxRowsPerShard,
    });
    return await this.#admit(params);
  }

  /**
   * Deletes up to `maxRows` expired rows, oldest first, and returns how many
   * it deleted. Expired rows do not affect decisions, but they hold capacity
   * until deleted (an admission reclaims them only in a full shard): call
   * this on a schedule, and again while it returns `maxRows`. Safe to run
   * from several replicas; rows an admission holds are skipped.
   *
   * @throws {RangeError} for `maxRows` outside 1 to 100,000.
   * @throws {LedgerError} when the database failed; no quota is involved, so
   *   `mayHaveConsumed` is false and a retry is safe.
   *
   * @param maxRows Rows deleted at most, 1 to 100,000.
   * @returns A promise of how many it deleted.
   */
  async cleanupExpired(maxRows: number): Promise<number> {
    if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_CLEANUP_ROWS) {
      throw new RangeError(
        `cleanupExpired: maxRows must be a whole number from 1 to ${MAX_CLEANUP_ROWS}, got ${
          String(maxRows)
        }`,
      );
    }
    this.#refuseIfClosed("cleanupExpired");
    try {
      const rows = await this.#sql.unsafe(cleanupStatement(this.#schema), [maxRows]).values();
      return Number(rows[0][0]);
    } catch (error) {
      throw ledgerError("cleanupExpired", error);
    }
  }

  /**
   * How many keys the ledger holds, overall and in its fullest shard.
   *
   * @returns A promise of the counts.
   * @throws {LedgerError} when the database failed.
   */
  async capacity(): Promise<LedgerCapacity> {
    this.#refuseIfClosed("capacity");
    try {
      const [[rows, fullest]] = await this.#sql.unsafe(capacityStatement(this.#schema)).values();
      return {
        rows: Number(rows),
        fullestShardRows: Number(fullest),
        maxRowsPerShard: this.#maxRowsPerShard,
        maxRows: this.#maxRowsPerShard * SHARD_COUNT,
      };
    } catch (error) {
      throw ledgerError("capacity", error);
    }
  }

  /**
   * Refuses further calls; ends the pool if {@link connect} made it. A
   * client passed to the constructor stays the caller's to end.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // postgres.js can wait forever to end a connection the server killed;
    // the timeout (seconds) bounds that, then closes whatever is left.
    if (this.#owned) await this.#sql.end({ timeout: 5 });
  }

  /** {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #refuseIfClosed(operation: string): void {
    if (this.#closed) {
      throw new LedgerError("Closed", `${operation}: the ledger is closed`, {
        mayHaveConsumed: false,
      });
    }
  }

  // One statement, one round trip: the check function runs as its own
  // transaction and commits as the statement ends, so locks are held only
  // while the server works. The price is that a connection lost after the
  // statement left cannot tell a commit from a rollback: mayHaveConsumed.
  //
  // (A COMMIT sent after the decision would make that precise, but it
  // needs a reserved connection, and postgres.js 3.4 stops serving a pool
  // whose reserved connections the server killed, where its plain pool
  // recovers: the fault tests kill connections and check that it does.)
  async #admit(params: BatchParams): Promise<QuotaBatchDecision> {
    const args = [
      params.policies,
      params.subjects,
      params.limits,
      params.windowsMs,
      params.costs,
      this.#maxRowsPerShard,
      params.shadow,
    ];
    for (let attempt = 1;; attempt++) {
      try {
        const rows = await this.#sql.unsafe(this.#checkText, args, { prepare: true }).values();
        return toQuotaBatchDecision(rows as unknown as CheckRow[], params.limits);
      } catch (error) {
        // postgres.js hands the FATAL of a connection the server killed to
        // the next query on it, before sending that query: one retry.
        if (attempt === 1 && endedSession(error)) continue;
        throw ledgerError("check", error, { mayHaveConsumed: mayHaveCommitted(error) });
      }
    }
  }
}

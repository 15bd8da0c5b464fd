/**
 * Exact quotas on PostgreSQL (`@rateguard/guard/postgres`): a shared ledger
 * for limits that must never be exceeded, such as daily or monthly quotas,
 * billing and prepaid plans.
 *
 * The gossip `Guard` decides locally and shares demand, so it is fast and
 * approximate. This ledger asks the database on every check, so it is exact
 * and costs a round trip. Put the Guard in front as a cheap first gate and
 * keep the ledger for the quotas that carry a price.
 *
 * Semantics: anchored fixed windows (a key's window starts at its first
 * admitted check and lasts `windowMs`); denied checks consume nothing;
 * batches are all or nothing; the database's clock is the authority;
 * subjects are HMAC-hashed before they leave the process; storage is
 * bounded per shard and live windows are never evicted; errors fail closed
 * and say whether quota may have been consumed.
 *
 * Only this entry point loads the `postgres` driver: importing the core
 * package never does.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FixedWindowPolicy, KeyHasher, migrationSql } from "@rateguard/guard/postgres";
 *
 * const policy = new FixedWindowPolicy({
 *   id: "billing.api", scope: "tenant", limit: 1_000, windowMs: 60_000,
 * });
 * const hasher = await KeyHasher.fromSecret(crypto.getRandomValues(new Uint8Array(32)));
 * const key = await hasher.hashFor(policy, "tenant:42"); // what the database stores
 * assert(key.length === 32);
 * assert(migrationSql("quotas").includes("rateguard_check_v1"));
 * ```
 *
 * @module
 */

export { MAX_BATCH } from "./batch.ts";
export type { QuotaBatchDecision, QuotaCheck, QuotaDecision, QuotaReason } from "./decision.ts";
export { LedgerError, type LedgerErrorCode } from "./errors.ts";
export { OperationalError } from "../core/errors.ts";
export { KeyHasher, MIN_SECRET_BYTES } from "./keys.ts";
export {
  DEFAULT_MAX_ROWS_PER_SHARD,
  type LedgerCapacity,
  type LedgerSql,
  MAX_CLEANUP_ROWS,
  PostgresLedger,
  type PostgresLedgerOptions,
} from "./ledger.ts";
export {
  FixedWindowPolicy,
  type FixedWindowPolicyOptions,
  MAX_LIMIT,
  MAX_WINDOW_MS,
  type QuotaMode,
} from "./policy.ts";
export { DEFAULT_SCHEMA, MAX_ROWS_PER_SHARD, migrationSql, SHARD_COUNT } from "./schema.ts";

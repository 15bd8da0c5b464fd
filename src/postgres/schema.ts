/**
 * The ledger's SQL: the migration that creates its tables and functions in a
 * schema of the caller's choice, and the statements the ledger runs. Teams
 * that vendor migrations take {@link migrationSql} as it is.
 *
 * Every admission is one call of one server-side function, its own
 * transaction: the SQL a check sends is the same whatever the batch size,
 * and its locks are held only while the server works, never across the
 * network.
 *
 * @module
 */

/** The number of capacity shards; a key's shard is the first byte of its subject key. */
export const SHARD_COUNT = 256;

/** The most rows a shard may hold, enforced by the database whatever a replica asks. */
export const MAX_ROWS_PER_SHARD = 65_536;

/** The schema objects are created in when none is named. */
export const DEFAULT_SCHEMA = "public";

// Advisory locks use the two-int4 form: its lock tags never collide with the
// bigint form most applications use, and the first int names rateguard
// ("rgrd"), so only another user of this exact class could ever contend.
const KEY_LOCK_CLASS = 0x72677264;
const MIGRATION_LOCK_CLASS = KEY_LOCK_CLASS + 1;

// Unquoted identifiers only: nothing to escape, and what an operator types in
// psql names the same schema.
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Throws unless `schema` is a plain lowercase PostgreSQL identifier, and
 * returns it quoted.
 *
 * @throws {TypeError} naming the value when it is not.
 */
export function quoteSchema(schema: string): string {
  if (typeof schema !== "string" || !IDENTIFIER.test(schema)) {
    throw new TypeError(
      `schema must be a lowercase identifier ([a-z_][a-z0-9_]*, at most 63), got ${
        JSON.stringify(schema)
      }`,
    );
  }
  return `"${schema}"`;
}

/**
 * The complete migration for `schema`, to run in one transaction (as
 * `migrate()` does): idempotent, so safe on every start and from every
 * replica at once. Requires PostgreSQL 12 or later.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrationSql } from "@rateguard/guard/postgres";
 *
 * const sql = migrationSql("quotas");
 * assert(sql.includes('CREATE TABLE IF NOT EXISTS "quotas".rateguard_fixed_windows'));
 * ```
 *
 * @param schema The schema to create the tables and functions in, a plain identifier.
 * @returns The SQL, idempotent.
 * @throws {TypeError} when `schema` is not a plain identifier.
 */
export function migrationSql(schema: string = DEFAULT_SCHEMA): string {
  const s = quoteSchema(schema);
  return [
    `-- A re-run is expected: its "already exists, skipping" notices are noise.`,
    `SET LOCAL client_min_messages = warning;`,
    `-- Replicas migrating at once would race on the catalog; one at a time.`,
    `SELECT pg_catalog.pg_advisory_xact_lock(${MIGRATION_LOCK_CLASS}, 0);`,
    `CREATE SCHEMA IF NOT EXISTS ${s};`,
    tablesSql(s),
    capacityTriggerSql(s),
    checkFunctionSql(s),
    cleanupFunctionSql(s),
  ].join("\n");
}

function tablesSql(s: string): string {
  return `
-- One row per (policy, subject) key. Fillfactor 80 leaves room on each page
-- so in-window increments, which change no indexed column, are HOT updates.
CREATE TABLE IF NOT EXISTS ${s}.rateguard_fixed_windows (
  policy bytea NOT NULL CHECK (pg_catalog.octet_length(policy) = 16),
  subject bytea NOT NULL CHECK (pg_catalog.octet_length(subject) = 32),
  shard smallint GENERATED ALWAYS AS (pg_catalog.get_byte(subject, 0)::smallint) STORED,
  used bigint NOT NULL CHECK (used >= 0),
  window_ends_at timestamptz NOT NULL,
  PRIMARY KEY (policy, subject)
) WITH (fillfactor = 80);
CREATE INDEX IF NOT EXISTS rateguard_fixed_windows_ends
  ON ${s}.rateguard_fixed_windows (window_ends_at);
CREATE INDEX IF NOT EXISTS rateguard_fixed_windows_shard_ends
  ON ${s}.rateguard_fixed_windows (shard, window_ends_at);

-- The capacity ledger: rows held per shard, kept exact by triggers, capped
-- by the database so that no replica's setting can lift the bound.
CREATE TABLE IF NOT EXISTS ${s}.rateguard_capacity (
  shard smallint PRIMARY KEY CHECK (shard BETWEEN 0 AND ${SHARD_COUNT - 1}),
  rows integer NOT NULL DEFAULT 0 CHECK (rows BETWEEN 0 AND ${MAX_ROWS_PER_SHARD})
);
INSERT INTO ${s}.rateguard_capacity (shard)
  SELECT g FROM pg_catalog.generate_series(0, ${SHARD_COUNT - 1}) AS g
  ON CONFLICT DO NOTHING;`;
}

function capacityTriggerSql(s: string): string {
  const create = (name: string, when: string, referencing: string) => `
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_trigger
                 WHERE tgrelid = '${s}.rateguard_fixed_windows'::regclass AND tgname = '${name}') THEN
    CREATE TRIGGER ${name} AFTER ${when} ON ${s}.rateguard_fixed_windows
      ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${s}.rateguard_count_rows();
  END IF;`;
  return `
-- Statement-level, so a batch of inserts or a cleanup updates each shard
-- once. Writers lock the shards they touch first, in ascending order; the
-- trigger then only updates rows its own transaction already holds.
CREATE OR REPLACE FUNCTION ${s}.rateguard_count_rows() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $count$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE ${s}.rateguard_capacity AS c SET rows = c.rows + n.count
      FROM (SELECT shard, count(*)::integer AS count FROM new_rows GROUP BY shard) AS n
      WHERE c.shard = n.shard;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE ${s}.rateguard_capacity AS c SET rows = c.rows - o.count
      FROM (SELECT shard, count(*)::integer AS count FROM old_rows GROUP BY shard) AS o
      WHERE c.shard = o.shard;
  ELSE
    UPDATE ${s}.rateguard_capacity SET rows = 0 WHERE rows <> 0;
  END IF;
  RETURN NULL;
END
$count$;
-- Created only when missing: CREATE TRIGGER locks the table, and migrate()
-- runs on every start.
DO $triggers$ BEGIN${
    create("rateguard_count_inserts", "INSERT", "REFERENCING NEW TABLE AS new_rows")
  }${create("rateguard_count_deletes", "DELETE", "REFERENCING OLD TABLE AS old_rows")}${
    create("rateguard_count_truncates", "TRUNCATE", "")
  }
END $triggers$;`;
}

function checkFunctionSql(s: string): string {
  return `
-- Admits a batch of checks, all or nothing. Phases: key locks (ascending, so
-- batches never deadlock), row locks, shard locks for new keys (ascending),
-- one clock sample, reclaim of expired rows in full shards, then one
-- statement that decides and, when every check passes, writes.
CREATE OR REPLACE FUNCTION ${s}.rateguard_check_v1(
  p_policies text[], p_subjects text[], p_limits bigint[], p_windows_ms bigint[],
  p_costs bigint[], p_max_rows_per_shard integer, p_shadow boolean
) RETURNS TABLE (outcome text, remaining bigint, reset_ms bigint, retry_after_ms bigint)
LANGUAGE plpgsql VOLATILE
-- Generic plans: the statements' best plans are index lookups by key
-- whatever the arguments, and custom plans would re-plan every statement on
-- every call, which costs more than running them.
SET plan_cache_mode = force_generic_plan SET search_path = pg_catalog, pg_temp AS $check$
DECLARE
  v_policies bytea[];
  v_subjects bytea[];
  v_lock integer;
  v_new_keys boolean;
  v_now timestamptz;
BEGIN
  -- Each phase reads what the previous one locked; a snapshot older than
  -- the locks would decide on stale counts.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'rateguard_check_v1 needs READ COMMITTED, not %',
      current_setting('transaction_isolation') USING ERRCODE = '25000';
  END IF;
  SELECT array_agg(decode(k.p, 'hex') ORDER BY k.i), array_agg(decode(k.s, 'hex') ORDER BY k.i)
    INTO v_policies, v_subjects
    FROM unnest(p_policies, p_subjects) WITH ORDINALITY AS k(p, s, i);

  -- Advisory locks also cover keys that have no row yet. The lock id is
  -- bytes 1-4 of the subject key; a shared id only makes two keys wait.
  FOR v_lock IN
    SELECT DISTINCT ('x' || substr(k, 3, 8))::bit(32)::integer FROM unnest(p_subjects) AS k ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(${KEY_LOCK_CLASS}, v_lock);
  END LOOP;

  -- Pins existing rows against cleanup, which skips locked rows.
  PERFORM 1 FROM ${s}.rateguard_fixed_windows AS w, unnest(v_policies, v_subjects) AS k(policy, subject)
    WHERE w.policy = k.policy AND w.subject = k.subject FOR UPDATE OF w;

  PERFORM 1 FROM ${s}.rateguard_capacity AS c
    WHERE c.shard IN (
      SELECT get_byte(k.subject, 0) FROM unnest(v_policies, v_subjects) AS k(policy, subject)
      WHERE NOT EXISTS (SELECT FROM ${s}.rateguard_fixed_windows AS w
                        WHERE w.policy = k.policy AND w.subject = k.subject))
    ORDER BY c.shard FOR UPDATE;
  v_new_keys := FOUND;

  -- The database clock is the authority, sampled once the locks are held.
  v_now := pg_catalog.clock_timestamp();
  IF v_new_keys THEN${reclaimSql(s)}
  END IF;
${decideSql(s)}
END
$check$;`;
}

// An expired row still holds its slot until deleted. A shard too full for
// the batch's new keys first deletes as many expired rows as it is short
// (never an active window, never a row another transaction holds), so a
// StorageCapacity denial means the shard is full of live windows.
function reclaimSql(s: string): string {
  return `
  DELETE FROM ${s}.rateguard_fixed_windows AS w
  USING (
    SELECT x.policy, x.subject
    FROM (
      SELECT n.shard, c.rows + count(*) - p_max_rows_per_shard AS short
      FROM (SELECT get_byte(k.subject, 0) AS shard FROM unnest(v_policies, v_subjects) AS k(policy, subject)
            WHERE NOT EXISTS (SELECT FROM ${s}.rateguard_fixed_windows AS w
                              WHERE w.policy = k.policy AND w.subject = k.subject)) AS n
      JOIN ${s}.rateguard_capacity AS c ON c.shard = n.shard
      GROUP BY n.shard, c.rows
    ) AS need
    CROSS JOIN LATERAL (
      SELECT e.policy, e.subject FROM ${s}.rateguard_fixed_windows AS e
      WHERE e.shard = need.shard AND e.window_ends_at <= v_now
        AND (e.policy, e.subject) NOT IN (SELECT * FROM unnest(v_policies, v_subjects))
      ORDER BY e.window_ends_at LIMIT need.short
      FOR UPDATE SKIP LOCKED
    ) AS x
    WHERE need.short > 0
  ) AS gone
  WHERE w.policy = gone.policy AND w.subject = gone.subject;`;
}

function decideSql(s: string): string {
  return `
  RETURN QUERY
  WITH input AS (
    SELECT k.i, k.policy, k.subject, get_byte(k.subject, 0) AS shard, k.lim, k.cost,
           pg_catalog.make_interval(secs => k.window_ms / 1000.0) AS window_length
    FROM unnest(v_policies, v_subjects, p_limits, p_windows_ms, p_costs)
         WITH ORDINALITY AS k(policy, subject, lim, window_ms, cost, i)
  ), state AS (
    SELECT n.*, w.policy IS NOT NULL AS stored,
           CASE WHEN w.window_ends_at > v_now THEN w.used ELSE 0 END AS used,
           CASE WHEN w.window_ends_at > v_now THEN w.window_ends_at
                ELSE v_now + n.window_length END AS ends_at
    FROM input AS n
    LEFT JOIN ${s}.rateguard_fixed_windows AS w ON w.policy = n.policy AND w.subject = n.subject
  ), room AS (
    SELECT t.shard, c.rows + count(*) <= p_max_rows_per_shard AS fits
    FROM state AS t JOIN ${s}.rateguard_capacity AS c ON c.shard = t.shard
    WHERE NOT t.stored GROUP BY t.shard, c.rows
  ), verdict AS (
    SELECT t.*, CASE WHEN NOT t.stored AND NOT r.fits THEN 'capacity'
                     WHEN t.used + t.cost > t.lim THEN 'quota'
                     ELSE 'allowed' END AS outcome
    FROM state AS t LEFT JOIN room AS r ON r.shard = t.shard
  ), batch AS (
    SELECT bool_and(v.outcome = 'allowed') AS admit FROM verdict AS v
  ), renewed AS (
    UPDATE ${s}.rateguard_fixed_windows AS w SET used = v.used + v.cost, window_ends_at = v.ends_at
    FROM verdict AS v, batch AS b
    WHERE b.admit AND v.stored AND w.policy = v.policy AND w.subject = v.subject
  ), created AS (
    INSERT INTO ${s}.rateguard_fixed_windows (policy, subject, used, window_ends_at)
    SELECT v.policy, v.subject, v.cost, v.ends_at FROM verdict AS v, batch AS b
    WHERE b.admit AND NOT v.stored
  )
  SELECT CASE WHEN v.outcome = 'quota' AND p_shadow THEN 'shadow' ELSE v.outcome END,
         CASE WHEN v.outcome = 'capacity' THEN 0
              ELSE v.lim - v.used - CASE WHEN b.admit THEN v.cost ELSE 0 END END,
         CASE WHEN v.outcome = 'capacity' THEN 0 ELSE ${ms("v.ends_at")} END,
         CASE WHEN v.outcome = 'quota' THEN ${ms("v.ends_at")}
              WHEN v.outcome = 'capacity' THEN coalesce((
                SELECT ${ms("min(e.window_ends_at)")} FROM ${s}.rateguard_fixed_windows AS e
                WHERE e.shard = v.shard), 0)
              ELSE 0 END
  FROM verdict AS v, batch AS b ORDER BY v.i;`;
}

// Whole milliseconds from now until `at`, rounded up so a caller who waits
// that long finds the window over; never negative.
function ms(at: string): string {
  return `greatest(0, ceil(extract(epoch FROM ${at} - v_now) * 1000))::bigint`;
}

function cleanupFunctionSql(s: string): string {
  return `
-- Deletes up to p_max_rows expired rows, oldest first, skipping rows an
-- admission holds. Victims are locked first, then their shards in ascending
-- order, as admissions lock them.
CREATE OR REPLACE FUNCTION ${s}.rateguard_cleanup_v1(p_max_rows integer) RETURNS integer
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET search_path = pg_catalog, pg_temp AS $cleanup$
DECLARE
  v_now timestamptz := pg_catalog.clock_timestamp();
  v_policies bytea[];
  v_subjects bytea[];
  v_deleted integer;
BEGIN
  SELECT array_agg(x.policy), array_agg(x.subject) INTO v_policies, v_subjects
  FROM (SELECT w.policy, w.subject FROM ${s}.rateguard_fixed_windows AS w
        WHERE w.window_ends_at <= v_now ORDER BY w.window_ends_at LIMIT p_max_rows
        FOR UPDATE SKIP LOCKED) AS x;
  IF v_policies IS NULL THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM ${s}.rateguard_capacity AS c
    WHERE c.shard IN (SELECT get_byte(k, 0) FROM unnest(v_subjects) AS k)
    ORDER BY c.shard FOR UPDATE;
  DELETE FROM ${s}.rateguard_fixed_windows AS w
    USING unnest(v_policies, v_subjects) AS k(policy, subject)
    WHERE w.policy = k.policy AND w.subject = k.subject;
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  RETURN v_deleted;
END
$cleanup$;`;
}

/** The statement an admission runs, as a transaction of its own. */
export function checkStatement(schema: string): string {
  return `SELECT outcome, remaining, reset_ms, retry_after_ms FROM ${
    quoteSchema(schema)
  }.rateguard_check_v1($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::integer, $7::boolean)`;
}

/** The statement a cleanup runs, returning the number of rows it deleted. */
export function cleanupStatement(schema: string): string {
  return `SELECT ${quoteSchema(schema)}.rateguard_cleanup_v1($1::integer) AS deleted`;
}

/** Rows held across all shards and in the fullest one. */
export function capacityStatement(schema: string): string {
  return `SELECT coalesce(sum(rows), 0)::bigint AS rows, coalesce(max(rows), 0) AS fullest FROM ${
    quoteSchema(schema)
  }.rateguard_capacity`;
}

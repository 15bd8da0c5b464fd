// The ledger against a real PostgreSQL server: windows, batches, shadow
// mode, the capacity bound, cleanup, and what reaches the database.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import postgres from "postgres";
import { FixedWindowPolicy, LedgerError, PostgresLedger } from "../../src/postgres/mod.ts";
import { type Fixture, fixture, PG_URL, skipWithoutServer, uniqueId } from "./server.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function policy(limit: number, windowMs: number, mode?: "shadow"): FixedWindowPolicy {
  return new FixedWindowPolicy({ id: uniqueId("test"), scope: "subject", limit, windowMs, mode });
}

describe("PostgresLedger", { skip: skipWithoutServer, timeout: 60_000 }, () => {
  let f: Fixture;
  before(async () => {
    f = await fixture();
  });
  after(async () => {
    await f?.dispose();
  });

  test("admits up to the limit, then denies with the time until the window ends", async () => {
    const p = policy(3, 60_000);
    const first = await f.ledger.check(p, "alice", { cost: 2 });
    assert.deepEqual(
      { ...first },
      {
        allowed: true,
        reason: "Allowed",
        limit: 3,
        remaining: 1,
        resetMs: 60_000,
        retryAfterMs: 0,
      },
    );
    assert.equal((await f.ledger.check(p, "alice")).remaining, 0);
    const denied = await f.ledger.check(p, "alice");
    assert.equal(denied.allowed, false);
    assert.equal(denied.reason, "QuotaExhausted");
    assert.ok(
      denied.retryAfterMs > 55_000 && denied.retryAfterMs <= 60_000,
      `${denied.retryAfterMs}`,
    );
    assert.equal(denied.resetMs, denied.retryAfterMs);
    // Denials consume nothing: a cheaper check still fails only because
    // nothing is left, and another subject is untouched.
    assert.equal((await f.ledger.check(p, "bob", { cost: 3 })).remaining, 0);
  });

  test("the window is anchored at the first admitted check and expiry re-admits", async () => {
    const p = policy(2, 300);
    assert.equal((await f.ledger.check(p, "carol", { cost: 2 })).allowed, true);
    const denied = await f.ledger.check(p, "carol");
    assert.equal(denied.allowed, false);
    await sleep(denied.retryAfterMs + 20);
    const again = await f.ledger.check(p, "carol");
    assert.equal(again.allowed, true);
    assert.equal(again.remaining, 1);
    assert.equal(again.resetMs, 300, "a fresh window starts at this check");
  });

  test("a batch whose second check is exhausted consumes neither", async () => {
    const user = policy(10, 60_000);
    const org = policy(1, 60_000);
    assert.equal((await f.ledger.check(org, "org-1")).allowed, true);
    const batch = await f.ledger.checkAll([
      { policy: user, subject: "user-1" },
      { policy: org, subject: "org-1" },
    ]);
    assert.equal(batch.allowed, false);
    assert.equal(batch.allowed === false && batch.deniedIndex, 1);
    assert.equal(batch.allowed === false && batch.denial.reason, "QuotaExhausted");
    assert.equal(
      (await f.ledger.check(user, "user-1", { cost: 10 })).allowed,
      true,
      "user-1 untouched",
    );
    const ok = await f.ledger.checkAll([
      { policy: policy(5, 60_000), subject: "x" },
      { policy: policy(5, 60_000), subject: "x", cost: 5 },
    ]);
    assert.equal(ok.allowed, true);
    assert.deepEqual(ok.allowed && ok.decisions.map((d) => d.remaining), [4, 0]);
  });

  test("cleanup deletes at most maxRows expired rows a call", async () => {
    // A schema of its own: the other tests' short windows, in the shared
    // one, expired between its calls and were counted (1 !== 0 on Node).
    const own = await fixture();
    try {
      const ledger = own.ledger;
      const p = policy(5, 100);
      await Promise.all(["a", "b", "c", "d", "e"].map((s) => ledger.check(p, `cleanup-${s}`)));
      await sleep(150);
      const before = (await ledger.capacity()).rows;
      assert.equal(await ledger.cleanupExpired(2), 2);
      assert.equal((await ledger.capacity()).rows, before - 2);
      assert.equal(await ledger.cleanupExpired(100), 3);
      assert.equal(await ledger.cleanupExpired(100), 0);
      await assert.rejects(ledger.cleanupExpired(0), RangeError);
    } finally {
      await own.dispose();
    }
  });

  test("batches naming the same keys in opposite orders never deadlock", async () => {
    const p = policy(1_000, 60_000);
    const keys = ["k1", "k2", "k3", "k4"];
    const batches = Array.from({ length: 40 }, (_, i) => {
      const order = i % 2 === 0 ? keys : [...keys].reverse();
      return f.ledger.checkAll(order.map((subject) => ({ policy: p, subject })));
    });
    const results = await Promise.all(batches);
    assert.ok(results.every((b) => b.allowed));
    assert.equal((await f.ledger.check(p, "k1")).remaining, 1_000 - 41);
  });

  test("shadow mode admits what it would deny and consumes nothing then", async () => {
    const enforced = policy(2, 60_000);
    const shadow = enforced.withMode("shadow");
    assert.equal((await f.ledger.check(shadow, "dave")).reason, "Allowed");
    assert.equal((await f.ledger.check(shadow, "dave")).reason, "Allowed");
    const would = await f.ledger.check(shadow, "dave");
    assert.equal(would.allowed, true);
    assert.equal(would.reason, "ShadowDenied");
    assert.ok(would.retryAfterMs > 0);
    // Warmed counters carry over to enforcement: same fingerprint.
    assert.equal((await f.ledger.check(enforced, "dave")).reason, "QuotaExhausted");
    // A shadow-denied batch consumes nothing, not even its passing checks.
    const fresh = shadow.withMode("shadow");
    const other = policy(5, 60_000, "shadow");
    const batch = await f.ledger.checkAll([
      { policy: other, subject: "erin" },
      { policy: fresh, subject: "dave" },
    ]);
    assert.equal(batch.allowed, true);
    assert.deepEqual(batch.allowed && batch.decisions.map((d) => d.reason), [
      "Allowed",
      "ShadowDenied",
    ]);
    assert.equal((await f.ledger.check(other, "erin", { cost: 5 })).reason, "Allowed");
  });

  test("changing a policy starts fresh counters", async () => {
    const id = uniqueId("plan");
    const small = new FixedWindowPolicy({ id, scope: "tenant", limit: 1, windowMs: 60_000 });
    const bigger = new FixedWindowPolicy({ id, scope: "tenant", limit: 2, windowMs: 60_000 });
    assert.equal((await f.ledger.check(small, "t1")).allowed, true);
    assert.equal((await f.ledger.check(small, "t1")).allowed, false);
    assert.equal((await f.ledger.check(bigger, "t1")).remaining, 1);
  });

  test("raw subjects never reach the database", async () => {
    const subject = `secret-subject-${crypto.randomUUID()}`;
    await f.ledger.check(policy(5, 60_000), subject);
    const [row] = await f.sql.unsafe(
      `SELECT count(*)::int AS n FROM "${f.schema}".rateguard_fixed_windows
       WHERE position($1::bytea IN subject) > 0 OR position($1::bytea IN policy) > 0`,
      [new TextEncoder().encode(subject.slice(0, 16))],
    );
    assert.equal(row.n, 0);
    const [stat] = await f.sql`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE query LIKE ${"%" + subject + "%"} AND pid <> pg_backend_pid()`;
    assert.equal(stat.n, 0);
  });

  test("migrate is idempotent, also when replicas run it at once", async () => {
    await Promise.all([f.ledger.migrate(), f.ledger.migrate(), f.ledger.migrate()]);
    assert.equal((await f.ledger.check(policy(1, 60_000), "frank")).allowed, true);
  });

  test("a ledger without its schema fails closed with SchemaMissing", async () => {
    const ledger = new PostgresLedger(f.sql, { hasher: f.hasher, schema: "rg_never_migrated" });
    await assert.rejects(
      ledger.check(policy(1, 60_000), "gina"),
      (e) => e instanceof LedgerError && e.code === "SchemaMissing" && !e.mayHaveConsumed,
    );
  });

  test("connect owns its pool; a closed ledger refuses calls", async () => {
    const ledger = PostgresLedger.connect(PG_URL!, {
      hasher: f.hasher,
      schema: f.schema,
      connection: { max: 1, onnotice: () => {} },
    });
    assert.equal((await ledger.check(policy(1, 60_000), "ivy")).allowed, true);
    assert.equal((await ledger.capacity()).maxRows, 256 * 4_096);
    await ledger.close();
    await assert.rejects(
      ledger.check(policy(1, 60_000), "ivy"),
      (e) => e instanceof LedgerError && e.code === "Closed" && !e.mayHaveConsumed,
    );
  });

  test("a session not in READ COMMITTED is refused, consuming nothing", async () => {
    const sql = postgres(PG_URL!, {
      max: 1,
      onnotice: () => {},
      connection: { default_transaction_isolation: "repeatable read" },
    });
    try {
      const ledger = new PostgresLedger(sql, { hasher: f.hasher, schema: f.schema });
      await assert.rejects(
        ledger.check(policy(1, 60_000), "jack"),
        (e) => e instanceof LedgerError && e.sqlState === "25000" && !e.mayHaveConsumed,
      );
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  test("caller mistakes throw before any SQL", async () => {
    await assert.rejects(f.ledger.check(policy(2, 1_000), "h", { cost: 3 }), RangeError);
    assert.throws(() => new PostgresLedger(f.sql, { hasher: f.hasher, schema: "Bad" }), TypeError);
    assert.throws(
      () => new PostgresLedger(f.sql, { hasher: f.hasher, maxRowsPerShard: 65_537 }),
      RangeError,
    );
  });
});

describe("PostgresLedger capacity", { skip: skipWithoutServer, timeout: 60_000 }, () => {
  let f: Fixture;
  before(async () => {
    f = await fixture({ maxRowsPerShard: 1 });
  });
  after(async () => {
    await f?.dispose();
  });

  test("a full shard denies new keys, not existing ones, and cleanup frees it", async () => {
    const p = policy(5, 400);
    // One row per shard: the holder's key fills the shard the newcomer's needs.
    const [held, newcomer] = await sameShard(f, p);
    assert.equal((await f.ledger.check(p, held)).allowed, true);
    const denied = await f.ledger.check(p, newcomer);
    assert.equal(denied.allowed, false);
    assert.equal(denied.reason, "StorageCapacity");
    assert.ok(denied.retryAfterMs > 0 && denied.retryAfterMs <= 400, `${denied.retryAfterMs}`);
    assert.equal((await f.ledger.check(p, held)).allowed, true, "the existing key still counts");
    assert.equal((await f.ledger.capacity()).fullestShardRows, 1);

    await sleep(450);
    assert.equal(await f.ledger.cleanupExpired(10), 1);
    assert.equal((await f.ledger.capacity()).rows, 0);
    assert.equal((await f.ledger.check(p, newcomer)).allowed, true, "cleanup freed the slot");
  });

  test("an expired row in a full shard is reclaimed by the next new key", async () => {
    const p = policy(5, 200);
    const [first, second] = await sameShard(f, p);
    assert.equal((await f.ledger.check(p, first)).allowed, true);
    assert.equal((await f.ledger.check(p, second)).reason, "StorageCapacity");
    await sleep(250);
    assert.equal((await f.ledger.check(p, second)).allowed, true);
    assert.equal((await f.ledger.capacity()).fullestShardRows, 1, "the ledger stayed exact");
  });
});

async function sameShard(f: Fixture, p: FixedWindowPolicy): Promise<[string, string]> {
  const seen = new Map<string, string>();
  for (let i = 0;; i++) {
    const subject = `s-${crypto.randomUUID()}`;
    const shard = (await f.hasher.hexFor(p, subject)).slice(0, 2);
    const other = seen.get(shard);
    if (other !== undefined) return [other, subject];
    seen.set(shard, subject);
    if (i > 10_000) throw new Error("unreachable: 256 shards");
  }
}

// The ledger's pure parts: policies, fingerprints, subject keys, batch
// validation and the migration text. No database needed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { prepareBatch } from "../../src/postgres/batch.ts";
import {
  FixedWindowPolicy,
  KeyHasher,
  MAX_WINDOW_MS,
  migrationSql,
} from "../../src/postgres/mod.ts";

const base = { id: "api.calls", scope: "tenant", limit: 100, windowMs: 60_000 };
const secret = new Uint8Array(32).fill(7);

test("a policy refuses bad names, limits and windows, naming the value", () => {
  assert.throws(() => new FixedWindowPolicy({ ...base, id: "" }), TypeError);
  assert.throws(() => new FixedWindowPolicy({ ...base, scope: "has space" }), /has space/);
  assert.throws(() => new FixedWindowPolicy({ ...base, limit: 0 }), RangeError);
  assert.throws(() => new FixedWindowPolicy({ ...base, limit: 1.5 }), /1\.5/);
  assert.throws(() => new FixedWindowPolicy({ ...base, windowMs: MAX_WINDOW_MS + 1 }), RangeError);
  assert.throws(
    () => new FixedWindowPolicy({ ...base, mode: "audit" as "shadow" }),
    /"audit"/,
  );
});

test("the fingerprint covers id, scope, limit and window, not the mode", async () => {
  const policy = new FixedWindowPolicy(base);
  const fingerprint = await policy.fingerprint();
  assert.match(fingerprint, /^[0-9a-f]{32}$/);
  assert.equal(await new FixedWindowPolicy(base).fingerprint(), fingerprint);
  assert.equal(await policy.withMode("shadow").fingerprint(), fingerprint);
  for (
    const change of [{ id: "api.other" }, { scope: "user" }, { limit: 101 }, { windowMs: 60_001 }]
  ) {
    const changed = await new FixedWindowPolicy({ ...base, ...change }).fingerprint();
    assert.notEqual(changed, fingerprint, JSON.stringify(change));
  }
});

test("KeyHasher wants 32 bytes of secret and never echoes it", async () => {
  await assert.rejects(KeyHasher.fromSecret(new Uint8Array(31)), RangeError);
  await assert.rejects(
    KeyHasher.fromSecret("short secret"),
    (e: Error) => e instanceof RangeError && !e.message.includes("short secret"),
  );
});

test("subject keys are deterministic, keyed, and separated by policy", async () => {
  const policy = new FixedWindowPolicy(base);
  const hasher = await KeyHasher.fromSecret(secret);
  const key = await hasher.hexFor(policy, "alice@example.test");
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(await hasher.hexFor(policy, "alice@example.test"), key);
  assert.equal(await hasher.hexFor(policy, new TextEncoder().encode("alice@example.test")), key);
  const other = await KeyHasher.fromSecret(new Uint8Array(32).fill(8));
  assert.notEqual(await other.hexFor(policy, "alice@example.test"), key);
  const elsewhere = new FixedWindowPolicy({ ...base, scope: "user" });
  assert.notEqual(await hasher.hexFor(elsewhere, "alice@example.test"), key);
  // Same id and scope, other limit: same subject key (the fingerprint, not
  // the subject key, tells the two counters apart).
  const relimited = new FixedWindowPolicy({ ...base, limit: 5 });
  assert.equal(await hasher.hexFor(relimited, "alice@example.test"), key);
  // Moving bytes between scope and subject must not collide.
  const a = new FixedWindowPolicy({ ...base, scope: "ab" });
  const b = new FixedWindowPolicy({ ...base, scope: "a" });
  assert.notEqual(await hasher.hexFor(a, "c"), await hasher.hexFor(b, "bc"));
});

test("a subject that is not a string or bytes is refused without echoing it", async () => {
  const hasher = await KeyHasher.fromSecret(secret);
  const policy = new FixedWindowPolicy(base);
  await assert.rejects(hasher.hashFor(policy, 42 as unknown as string), /got number/);
  await assert.rejects(hasher.hashFor(policy, ""), TypeError);
});

test("a batch refuses duplicates, mixed modes, bad costs and impossible shards", async () => {
  const hasher = await KeyHasher.fromSecret(secret);
  const policy = new FixedWindowPolicy(base);
  const options = { hasher, maxRowsPerShard: 4_096 };
  await assert.rejects(prepareBatch([], options), RangeError);
  await assert.rejects(
    prepareBatch([{ policy, subject: "a" }, { policy, subject: "a" }], options),
    /checks\[0\] and checks\[1\]/,
  );
  await assert.rejects(
    prepareBatch(
      [{ policy, subject: "a" }, { policy: policy.withMode("shadow"), subject: "b" }],
      options,
    ),
    TypeError,
  );
  await assert.rejects(prepareBatch([{ policy, subject: "a", cost: 101 }], options), /101/);
  await assert.rejects(prepareBatch([{ policy, subject: "a", cost: 0 }], options), RangeError);
  const sameShard = await twoSubjectsInOneShard(hasher, policy);
  const pair = sameShard.map((subject) => ({ policy, subject }));
  await assert.rejects(prepareBatch(pair, { hasher, maxRowsPerShard: 1 }), /one shard/);
  await prepareBatch(pair, { hasher, maxRowsPerShard: 2 });
  const ok = await prepareBatch([{ policy, subject: "a", cost: 3 }], options);
  assert.deepEqual(ok.costs, [3]);
  assert.equal(ok.shadow, false);
});

test("the migration names only the chosen schema, which must be a plain identifier", () => {
  const sql = migrationSql("quotas");
  assert.ok(sql.includes('"quotas".rateguard_fixed_windows'));
  assert.ok(!sql.includes('"public"'));
  assert.ok(sql.includes("pg_catalog.clock_timestamp()"));
  assert.throws(() => migrationSql('x"; DROP TABLE users; --'), TypeError);
  assert.throws(() => migrationSql("Quotas"), TypeError);
});

// The shard is the first byte of the subject key: among 40 subjects, two
// share one (birthday bound over 256 shards).
async function twoSubjectsInOneShard(
  hasher: KeyHasher,
  policy: FixedWindowPolicy,
): Promise<[string, string]> {
  const byShard = new Map<string, string>();
  for (let i = 0;; i++) {
    const subject = `subject-${i}`;
    const shard = (await hasher.hexFor(policy, subject)).slice(0, 2);
    const other = byShard.get(shard);
    if (other !== undefined) return [other, subject];
    byShard.set(shard, subject);
  }
}

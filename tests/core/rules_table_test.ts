// The table of rules on its own: slots that move down over the holes
// expired tombstones leave, and every rule, tombstone and block still
// where it should be afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { BlockedUntil, HLC_TICKS_PER_MS, type RuleEntry } from "../../src/core/rules_sync/entry.ts";
import { RuleTable } from "../../src/core/rules_sync/table.ts";

const HOUR_MS = 3_600_000;
const T = 1_800_000_000_000;
const origin = { hi: 0xc0000201, lo: 0x1f4a };

function keyLimit(i: number, atMs: number, value: Limit | undefined): RuleEntry {
  const version = { clock: atMs * HLC_TICKS_PER_MS + i, origin };
  return { kind: "keyLimit", className: "pro", key: `k${i}`, value, version };
}

/** Every entry of the table, page by page, as a transfer reads it. */
function pages(table: RuleTable): RuleEntry[] {
  const out: RuleEntry[] = [];
  for (let from = 0; from < table.end;) {
    const page = table.page(from, 1_000);
    out.push(...page.entries);
    from = page.next;
  }
  return out;
}

test("a table that drops most of its slots moves the rest down and holds, pages and digests them as before", () => {
  const table = new RuleTable(1_000, HOUR_MS);
  for (let i = 0; i < 300; i++) table.merge(keyLimit(i, T, Limit.perSecond(1 + i)), T);
  // Two of every three removed: tombstones, which expire after the hour.
  for (let i = 0; i < 300; i++) {
    if (i % 3 !== 0) table.merge(keyLimit(i, T + 1, undefined), T + 1);
  }
  assert.equal(table.size, 300);
  assert.equal(table.expire(T + HOUR_MS + 2), 200);
  assert.equal(table.size, 100);
  assert.ok(table.end < 300, "the slots moved down over the holes");
  const fresh = new RuleTable(1_000, HOUR_MS);
  for (let i = 0; i < 300; i += 3) fresh.merge(keyLimit(i, T, Limit.perSecond(1 + i)), T);
  assert.deepEqual(table.digest(), fresh.digest());
  assert.deepEqual(pages(table), pages(fresh));
  for (let i = 0; i < 300; i++) {
    const got = table.get("keyLimit", "pro", `k${i}`);
    if (i % 3 !== 0) assert.equal(got, undefined, `k${i} was forgotten`);
    else assert.deepEqual(got, keyLimit(i, T, Limit.perSecond(1 + i)));
  }
  // A rule that comes after takes a slot after the others, and an older copy changes nothing.
  assert.equal(table.merge(keyLimit(1, T + 5, Limit.perSecond(9)), T + HOUR_MS), "newer");
  assert.equal(table.merge(keyLimit(0, T - 5, undefined), T + HOUR_MS), "older");
  assert.equal(pages(table).at(-1)?.key, "k1");
});

test("tombstones and blocks held before a compaction still expire and end after it", () => {
  const table = new RuleTable(1_000, HOUR_MS);
  for (let i = 0; i < 200; i++) table.merge(keyLimit(i, T, undefined), T);
  const block = (i: number): RuleEntry => ({
    kind: "block",
    className: "pro",
    key: `b${i}`,
    value: new BlockedUntil(T + 2 * HOUR_MS),
    version: { clock: (T + 1.5 * HOUR_MS) * HLC_TICKS_PER_MS + i, origin },
  });
  for (let i = 0; i < 10; i++) table.merge(block(i), T);
  for (let i = 300; i < 310; i++) table.merge(keyLimit(i, T + HOUR_MS / 2, undefined), T);
  assert.equal(table.expire(T + HOUR_MS + 1), 200);
  assert.ok(table.end < 220, "compacted");
  assert.equal(table.digest().live, 10);
  assert.equal(
    table.expire(T + 1.5 * HOUR_MS + 1),
    10,
    "the later tombstones, moved, expire in turn",
  );
  assert.equal(table.expire(T + 2 * HOUR_MS), 0);
  assert.deepEqual(table.digest(), { live: 0, hi: 0, lo: 0 }, "the moved blocks ended");
  assert.equal(table.get("block", "pro", "b3")?.value, undefined);
  assert.equal(table.size, 10, "held as removals");
  assert.equal(table.expire(T + 2.5 * HOUR_MS + 1), 10);
  assert.equal(table.size, 0);
});

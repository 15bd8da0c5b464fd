/**
 * A full fleet rules table is said where an operator looks (issue 36):
 * `/readyz` (still ready, the reason in its body), the metrics, the
 * dashboard's feed; and a change it has no room for is a 507 with the
 * reason, not a silent success.
 */

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard } from "../../src/runtime/guard.ts";
import type { FleetRulesStats, Stats } from "../../src/runtime/stats.ts";
import { RateguardError } from "../../src/core/errors.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { DashboardFeed } from "../../src/http/dashboard_feed.ts";
import { prometheusText } from "../../src/metrics/prometheus.ts";
import { RulesWatch } from "../../src/runtime/rules_watch.ts";

const REASON = "the fleet rules table is full: 2378 of 2378 entries, 1 set here, 1254 from " +
  "origins that are no member (at most 1254; 1124 kept for members' changes)";

/** A guard whose stats say its fleet rules table is as `rules` says, and refuses changes so. */
function full(guard: Guard, rules: Partial<FleetRulesStats>): Guard {
  const real = guard.stats.bind(guard);
  guard.stats = (): Stats => {
    const s = real();
    return { ...s, rules: { ...s.rules, shared: true, ...rules } };
  };
  guard.rulesTableFull = () => rules.tableFullReason ?? "";
  guard.setKeyLimit = () => {
    throw new RateguardError("RulesFull", rules.tableFullReason ?? "");
  };
  return guard;
}

const FULL = {
  tableFull: true,
  tableFullReason: REASON,
  entries: 2378,
  bound: 2378,
  reserved: 1124,
  own: 1,
  peers: 2377,
  strangerEntries: 1254,
};

describe("a full fleet rules table", () => {
  it("/readyz stays ready and says the table is full", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    try {
      const app = sidecarApp(guard);
      assert.deepEqual(await text(app.request("/readyz")), [200, "ready\n"]);
      full(guard, FULL);
      assert.deepEqual(await text(app.request("/readyz")), [200, `ready; ${REASON}\n`]);
    } finally {
      await guard.leave();
    }
  });

  it("a change it has no room for is a 507 problem with the reason", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    try {
      const app = sidecarApp(full(guard, FULL));
      const res = await app.request("/v1/key-limits?key=t:1", {
        method: "PUT",
        body: JSON.stringify({ limit: "5/s" }),
      });
      assert.equal(res.status, 507);
      const problem = await res.json();
      assert.equal(problem.code, "RulesFull");
      assert.equal(problem.detail, REASON);
    } finally {
      await guard.leave();
    }
  });

  it("the metrics and the dashboard's feed say it", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    const feed = new DashboardFeed(guard, () => ({ classes: [], keyLimits: [], shadows: [] }));
    try {
      assert.match(
        prometheusText(guard.stats(), { guard: "g" }),
        /^rateguard_rules_table_full\{[^}]*\} 0$/m,
      );
      feed.stop();
      full(guard, FULL);
      const text = prometheusText(guard.stats(), { guard: "g" });
      assert.match(text, /^rateguard_rules_table_full\{[^}]*\} 1$/m);
      assert.match(text, /^rateguard_rules_entries\{[^}]*of="peers"[^}]*\} 2377$/m);
      assert.match(text, /^rateguard_rules_entries\{[^}]*of="own"[^}]*\} 1$/m);
      assert.match(text, /^rateguard_rules_entries\{[^}]*of="bound"[^}]*\} 2378$/m);
      feed.sample();
      const f = JSON.parse(feed.current()).fleetRules;
      assert.equal(f.tableFull, true);
      assert.equal(f.tableFullReason, REASON);
      assert.deepEqual([f.entries, f.bound, f.own, f.peers], [2378, 2378, 1, 2377]);
      const page = await (await sidecarApp(guard).request("/dashboard/app.js")).text();
      assert.match(page, /rules-table-full/);
      assert.match(page, /f\.tableFullReason/);
    } finally {
      feed.stop();
      await guard.leave();
    }
  });

  it("the log says it once when it starts, and once when it ends", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    try {
      const lines: string[] = [];
      const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
        lines.push(`${level} ${message} ${fields?.reason ?? fields?.entries ?? ""}`);
      const watch = new RulesWatch({ info: log("info"), warn: log("warn") });
      const base = guard.stats().rules;
      watch.observe(base);
      watch.observe({ ...base, ...FULL });
      watch.observe({ ...base, ...FULL });
      watch.observe({ ...base, entries: 2_000 });
      assert.deepEqual(lines, [
        `warn fleet rules table full ${REASON}`,
        "info fleet rules table has room again 2000",
      ]);
    } finally {
      await guard.leave();
    }
  });
});

async function text(res: Response | Promise<Response>): Promise<[number, string]> {
  const r = await res;
  return [r.status, await r.text()];
}

/**
 * A member whose fleet rules are out of step says so where an operator
 * looks (issue 31): `/readyz` with the reason, the dashboard's marker with
 * the digest, and the log, once as it starts; refusals are logged once a
 * reason.
 */

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard } from "../../src/runtime/guard.ts";
import type { FleetRulesStats, Stats } from "../../src/runtime/stats.ts";
import { NO_RULES } from "../../src/core/rules_sync/stats.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { DashboardFeed } from "../../src/http/dashboard_feed.ts";
import { RulesWatch } from "../../src/runtime/rules_watch.ts";
import { prometheusText } from "../../src/metrics/prometheus.ts";

const REASON = "rules digest 00000000000000aa (1 rules) has differed for 75 s from 1 of 2 live " +
  "peers', 10.0.0.2:7946's 00000000000000bb (2 rules) among them";

/** A guard whose stats say its fleet rules are `rules` (the rest as they are). */
function saying(guard: Guard, rules: Partial<FleetRulesStats>): Guard {
  const real = guard.stats.bind(guard);
  guard.stats = (): Stats => {
    const s = real();
    return { ...s, rules: { ...s.rules, shared: true, ...rules } };
  };
  guard.rulesOutOfStep = () => rules.outOfStepReason ?? "";
  return guard;
}

describe("fleet rules out of step", () => {
  it("/readyz stays ready and says why the rules are out of step", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    try {
      const app = sidecarApp(guard);
      assert.deepEqual(await text(app.request("/readyz")), [200, "ready\n"]);
      saying(guard, { outOfStep: true, outOfStepReason: REASON });
      const [status, body] = await text(app.request("/readyz"));
      assert.equal(status, 200);
      assert.equal(body, `ready; fleet rules out of step: ${REASON}\n`);
    } finally {
      await guard.leave();
    }
  });

  it("the dashboard's feed carries the marker's digest and reason, and the refusals", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    const feed = new DashboardFeed(guard, () => ({ classes: [], keyLimits: [], shadows: [] }));
    try {
      assert.equal(JSON.parse(feed.current()).fleetRules, null, "not shared: no marker");
      feed.stop();
      saying(guard, {
        digest: "00000000000000aa",
        outOfStep: true,
        outOfStepReason: REASON,
        malformed: 151,
        refusals: 151,
        lastRefusal: "malformed shadow: a shadow rule needs a class name (from 10.0.0.2:7946)",
      });
      feed.sample();
      const f = JSON.parse(feed.current()).fleetRules;
      assert.equal(f.outOfStep, true);
      assert.equal(f.digest, "00000000000000aa");
      assert.equal(f.outOfStepReason, REASON);
      assert.equal(f.malformed, 151);
      const page = await (await sidecarApp(guard).request("/dashboard/app.js")).text();
      assert.match(page, /rules-out-of-step/);
      assert.match(page, /f\.outOfStepReason/);
    } finally {
      feed.stop();
      await guard.leave();
    }
  });

  it("the metrics say it", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    try {
      const before = prometheusText(guard.stats(), { guard: "g" });
      assert.match(before, /^rateguard_rules_out_of_step\{[^}]*\} 0$/m);
      saying(guard, { outOfStep: true, apartMs: 75_000, outOfStepReason: REASON });
      const after = prometheusText(guard.stats(), { guard: "g" });
      assert.match(after, /^rateguard_rules_out_of_step\{[^}]*\} 1$/m);
      assert.match(after, /^rateguard_rules_apart_ms\{[^}]*\} 75000$/m);
    } finally {
      await guard.leave();
    }
  });

  it("the log tells a refusal once for its reason, and a fall out of step once as it starts and ends", () => {
    const lines: string[] = [];
    const log = (level: string) => (message: string, fields?: Record<string, string | number>) =>
      lines.push(`${level} ${message} ${fields?.reason ?? fields?.digest ?? ""}`);
    const watch = new RulesWatch({ info: log("info"), warn: log("warn") });
    const base: FleetRulesStats = {
      ...NO_RULES,
      shared: true,
      digest: "00000000000000aa",
      live: 1,
      entries: 1,
      bound: 10,
      reserved: 4,
      peers: 1,
    };
    const bad = "malformed shadow: bad (from 10.0.0.2:7946)";
    watch.observe(base);
    watch.observe({ ...base, refusals: 1, malformed: 1, lastRefusal: bad });
    watch.observe({ ...base, refusals: 150, malformed: 150, lastRefusal: bad });
    watch.observe({
      ...base,
      refusals: 151,
      outOfStep: true,
      outOfStepReason: REASON,
      lastRefusal: bad,
    });
    watch.observe({
      ...base,
      refusals: 151,
      outOfStep: true,
      outOfStepReason: REASON,
      lastRefusal: bad,
    });
    watch.observe({ ...base, refusals: 151 });
    assert.deepEqual(lines, [
      `warn fleet rule refused ${bad}`,
      `warn fleet rules out of step ${REASON}`,
      "info fleet rules in step again 00000000000000aa",
    ]);
  });
});

describe("a class's removal through the admin API", () => {
  it("takes its key limits, and the listing left can be written back", async () => {
    const guard = await Guard.builder().limit(5).spawn();
    try {
      const app = sidecarApp(guard);
      const put = (path: string, body: unknown) =>
        app.request(path, { method: "PUT", body: JSON.stringify(body) });
      assert.equal((await put("/v1/classes?class=pro", { limit: "10/s" })).status, 200);
      assert.equal((await put("/v1/key-limits?class=pro&key=t:1", { limit: "3/s" })).status, 200);
      assert.equal((await put("/v1/key-limits?key=t:2", { limit: "4/s" })).status, 200);
      const gone = await app.request("/v1/classes?class=pro", { method: "DELETE" });
      assert.equal(gone.status, 200);
      const listed = await (await app.request("/v1/key-limits")).json();
      assert.deepEqual(listed.keyLimits.map((e: { key: string }) => e.key), ["t:2"]);
      assert.equal((await put("/v1/key-limits", listed)).status, 200, "written back as listed");
    } finally {
      await guard.leave();
    }
  });
});

async function text(res: Response | Promise<Response>): Promise<[number, string]> {
  const r = await res;
  return [r.status, await r.text()];
}

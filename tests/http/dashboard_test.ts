import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { DashboardFeed, FEED_HISTORY } from "../../src/http/dashboard_feed.ts";

const limit = Limit.perSecond(5).burst(5);

describe("the dashboard", () => {
  it("serves one page and its script from the sidecar, under a policy that allows nothing else", async () => {
    const a = sidecarApp(await Guard.builder().defaultLimit(limit).spawn(), {
      adminToken: () => "s3cret",
    });
    const page = await a.request("/dashboard");
    assert.equal(page.status, 200, "the page holds no data: no token needed");
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    const policy = page.headers.get("content-security-policy") ?? "";
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'self'/);
    const html = await page.text();
    assert.match(html, /<script src="dashboard\/app\.js" defer><\/script>/);
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, "no outside asset");
    const script = await a.request("/dashboard/app.js");
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    const js = await script.text();
    const outside = js.replaceAll("http://www.w3.org/2000/svg", ""); // a namespace, not a fetch
    assert.doesNotMatch(outside, /innerHTML|https?:\/\//, "text only, nothing from outside");
    assert.doesNotThrow(() => new Function(js), "the script parses");
  });

  it("its data is an admin route: 401 without the token, the snapshot with it", async () => {
    const guard = await Guard.builder().defaultLimit(limit).spawn();
    const a = sidecarApp(guard, { adminToken: () => "s3cret", defaultLimit: limit });
    assert.equal((await a.request("/v1/dashboard")).status, 401);
    const res = await a.request("/v1/dashboard", { headers: { authorization: "Bearer s3cret" } });
    assert.equal(res.status, 200);
    const d = await res.json();
    assert.equal(d.fleet.clusterSize, 1);
    assert.equal(d.gossip, null, "standalone: no gossip");
    assert.deepEqual(d.members, []);
    assert.deepEqual(d.rules.classes, [{ class: "", limit: "5/s", burst: 5 }]);
    assert.equal(d.dryRun, false);
  });

  it("samples off the request path: rates from one sample to the next, named denied keys, a bounded history", async () => {
    const guard = await Guard.builder().defaultLimit(limit).spawn();
    let nowMs = 1_000_000;
    const feed = new DashboardFeed(
      guard,
      () => ({ classes: [], keyLimits: [], shadows: [] }),
      () => nowMs,
    );
    try {
      const first = JSON.parse(feed.current());
      assert.ok(feed.sampling, "the first request starts the sampler");
      for (let i = 0; i < 8; i++) guard.check("tenant:42");
      // Asking again serves the same sample: the request path computes nothing.
      assert.equal(feed.current(), JSON.stringify(first));
      nowMs += 1_000;
      feed.sample();
      const d = JSON.parse(feed.current());
      assert.deepEqual(d.series.admittedPerSec, [5]);
      assert.deepEqual(d.series.deniedPerSec, [3]);
      assert.equal(d.mostDenied[0].key, "tenant:42");
      assert.equal(d.mostDenied[0].class, "");
      for (let i = 0; i < FEED_HISTORY + 20; i++) (nowMs += 1_000, feed.sample());
      assert.equal(JSON.parse(feed.current()).series.admittedPerSec.length, FEED_HISTORY);
      // Stopped and started again after a gap: the chart starts afresh rather than join the two.
      feed.stop();
      nowMs += 60_000;
      assert.deepEqual(JSON.parse(feed.current()).series.admittedPerSec, []);
      assert.ok(feed.sampling);
    } finally {
      feed.stop();
    }
    assert.ok(!feed.sampling);
  });
});

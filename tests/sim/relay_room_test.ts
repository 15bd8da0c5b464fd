// The relay-room figure (src/sim/figures/relay_room.ts) at a size the suite
// can afford: in a fleet of 30, where a datagram carries every report held,
// every pair is refreshed within a few periods and always believed. A figure
// that read no reports, or counted no refresh, fails here rather than in the
// hour-long run of `deno task relay:room`.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { REPORT_BELIEVED_PERIODS } from "../../src/core/allocation/heard.ts";
import { RELAY_ROOM_MARKERS, relayRoom, relayRoomTable } from "../../src/sim/figures/relay_room.ts";

describe("relay room", () => {
  it("sees every pair refreshed within a few periods in a fleet of 30", () => {
    const r = relayRoom(30, { settleMs: 10_000, windowMs: 5_000 });
    assert.equal(r.members, 30);
    assert.equal(r.unbelieved, 0, "every pair holds a report believed");
    assert.equal(r.unheld, 0);
    // 870 pairs over 25 periods, refreshed every period or two.
    assert.ok(r.refreshes > 870 * 5, `${r.refreshes} refreshes`);
    assert.ok(r.intervalMedian >= 1 && r.intervalMedian <= 4, `median ${r.intervalMedian}`);
    assert.ok(r.intervalMedian <= r.intervalP90 && r.intervalP90 <= r.intervalMax);
    assert.ok(r.ageMedian > 0 && r.ageMedian <= r.ageP90, `ages ${r.ageMedian}, ${r.ageP90}`);
    assert.ok(r.ageP90 < REPORT_BELIEVED_PERIODS, `p90 age ${r.ageP90}`);
  });

  it("rewrites the rows it measured and keeps the others", () => {
    const run = (members: number, median: number) => ({
      members,
      watchedMs: [20_000, 40_000] as const,
      refreshes: 1,
      intervalMedian: median,
      intervalP90: median,
      intervalMax: median,
      ageMedian: median,
      ageP90: median,
      unbelieved: 0,
      unheld: 0,
    });
    const first = relayRoomTable([run(200, 2), run(1_000, 9)], "aaaaaaa");
    const block = `${RELAY_ROOM_MARKERS.begin} -->\n\n${first}\n\n${RELAY_ROOM_MARKERS.end}`;
    const lines = relayRoomTable([run(200, 3)], "bbbbbbb", `text\n${block}\n`).split("\n");
    assert.equal(lines.length, 4, lines.join("\n"));
    assert.match(lines[2], /^\| 200 .*3\.0 \/ 3\.0 \/ 3\.0 periods.*bbbbbbb, 20–40 s/);
    assert.match(lines[3], /^\| 1000 .*9\.0 \/ 9\.0 \/ 9\.0 periods.*aaaaaaa/);
  });
});

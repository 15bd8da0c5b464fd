// A test-only newcomer: spawns a guard with the given seeds, offers one key
// checks at once and as fast as a 1 ms timer allows for `--for-ms`, and
// prints one JSON line of what it admitted in its first 100 ms and in all.
//
//   joining_member.ts --seeds 127.0.0.1:7001 --limit 100 --for-ms 1500
import process from "node:process";
import { parseArgs } from "node:util";
import { GossipAuth, Guard } from "../../mod.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seeds: { type: "string", default: "" },
    limit: { type: "string", default: "100" },
    "for-ms": { type: "string", default: "1500" },
  },
});
const guard = await Guard.builder()
  .bind("127.0.0.1:0").gossipAuth(GossipAuth.Off)
  .seeds(values.seeds!.split(",").filter((s) => s !== ""))
  .limit(Number(values.limit))
  .burst(10)
  .protocolPeriodMs(100)
  .spawn();
const startMs = performance.now();
const forMs = Number(values["for-ms"]);
let checks = 0, admitted = 0, first100 = 0, lastMs = startMs;
const offer = () => {
  // Five checks a turn: far more than the limit, so admissions tell the share.
  for (let i = 0; i < 5; i++) {
    lastMs = performance.now();
    checks++;
    if (guard.check("k").allowed) {
      admitted++;
      if (lastMs - startMs < 100) first100++;
    }
  }
  if (lastMs - startMs < forMs) setTimeout(offer, 1);
  else void done();
};
offer();

async function done(): Promise<void> {
  const s = guard.stats();
  console.log(JSON.stringify({
    checks,
    admitted,
    first100,
    elapsedMs: lastMs - startMs,
    joining: s.joining,
    held: s.joining || s.learning || s.withoutQuorum || s.membersFull,
    clusterSize: s.clusterSize,
  }));
  await guard.leave();
  process.exit(0);
}

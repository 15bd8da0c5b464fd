// A test-only script: a guard in a fleet of one that checks a key, leaves,
// and then does nothing: the process must exit on its own (no timer or
// socket left behind). With --dispose it leaves through `await using`.
import process from "node:process";
import { GossipAuth, Guard } from "../../mod.ts";

if (process.argv.includes("--dispose")) {
  await using guard = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).limit(10)
    .spawn();
  guard.check("k");
} else {
  const guard = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).limit(10)
    .spawn();
  guard.check("k");
  await guard.leave();
}
console.log("left");

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseDurationMs } from "../../src/core/duration.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";
import { parseSidecarArgs } from "../../src/http/cli_args.ts";
import { GUARD_BOUNDS } from "../../src/core/options.ts";

describe("durations", () => {
  it("are read one way, for the partition policy and the sidecar's flags alike", () => {
    const texts = ["500", "500ms", "1.5s", "2m", "2min", " 3 S ", "10s"];
    for (const text of texts) {
      const ms = parseDurationMs(text);
      assert.notEqual(ms, undefined, text);
      assert.equal(PartitionPolicy.parse(`holddown:${text.trim()}`).holdMs, ms, text);
      const argv = [
        "--limit",
        "10",
        "--bind",
        "127.0.0.1:0",
        "--gossip-auth",
        "off",
        "--protocol-period",
        text,
      ];
      // The period's bounds are GUARD_BOUNDS's: a longer one is refused, naming the flag.
      if (ms! > GUARD_BOUNDS.protocolPeriodMs.max) {
        assert.throws(() => parseSidecarArgs(argv, {}), /^UsageError: --protocol-period: /, text);
        continue;
      }
      const run = parseSidecarArgs(argv, {});
      assert.equal(run.kind === "run" && run.config.protocolPeriodMs, Math.round(ms!), text);
    }
    for (const bad of ["", "s", "-1s", "1e3", "2h", "1.s", "ten"]) {
      assert.equal(parseDurationMs(bad), undefined, bad);
      assert.throws(() => PartitionPolicy.parse(`holddown:${bad}`), TypeError, bad);
    }
  });
});

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { Guard, Limit } from "../mod.ts";
import { METRICS, prometheusText, registerMetrics } from "../src/metrics/mod.ts";

class InMemoryReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function busyGuard(): Promise<Guard> {
  const guard = await Guard.builder().defaultLimit(Limit.perHour(3).burst(3)).dryRun(false).spawn();
  guard.setShadow("", Limit.perHour(1).burst(1));
  for (let i = 0; i < 5; i++) guard.check("k");
  guard.check("k", { class: "typo" });
  return guard;
}

describe("metrics", () => {
  it("OpenTelemetry: the exported values equal stats()", async () => {
    const guard = await busyGuard();
    const reader = new InMemoryReader();
    const provider = new MeterProvider({ readers: [reader] });
    const registration = registerMetrics(guard, { meter: provider.getMeter("test") });
    const { resourceMetrics } = await reader.collect();
    const exported = new Map<string, number>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        for (const point of metric.dataPoints) {
          const attrs = point.attributes as Record<string, string>;
          assert.equal(attrs.guard, "standalone");
          const rest = Object.entries(attrs).filter(([k]) => k !== "guard").map(([k, v]) =>
            `${k}=${v}`
          ).join(",");
          exported.set(`${metric.descriptor.name}{${rest}}`, point.value as number);
        }
      }
    }
    const stats = guard.stats();
    let series = 0;
    for (const m of METRICS) {
      for (const [labels, value] of m.series(stats)) {
        const rest = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",");
        assert.equal(exported.get(`${m.name}{${rest}}`), value, `${m.name}{${rest}}`);
        series++;
      }
    }
    assert.equal(exported.size, series, "nothing more, nothing less");
    assert.equal(exported.get("rateguard_checks_total{decision=deny}"), 2);
    assert.equal(exported.get("rateguard_unknown_class_total{}"), 1);
    registration.unregister();
    await provider.shutdown();
  });

  it("Prometheus text: parses, one series per label set, the same values", async () => {
    const guard = await busyGuard();
    const text = prometheusText(guard.stats(), { guard: 'a "quoted"\\name' });
    const families = parsePrometheusTextFormat(text) as Array<{
      name: string;
      type: string;
      metrics: Array<{ value: string; labels?: Record<string, string> }>;
    }>;
    assert.equal(families.length, METRICS.length);
    for (const family of families) {
      const keys = family.metrics.map((m) => JSON.stringify(m.labels ?? {}));
      assert.equal(new Set(keys).size, keys.length, `${family.name}: one series per label set`);
      for (const m of family.metrics) assert.equal(m.labels?.guard, 'a "quoted"\\name');
    }
    const checks = families.find((f) => f.name === "rateguard_checks_total")!;
    assert.equal(checks.type, "COUNTER");
    assert.deepEqual(
      checks.metrics.map((m) => [m.labels!.decision, Number(m.value)]),
      [["allow", 4], ["deny", 2]], // three of "k" and one in class "typo"
    );
    const auth = families.find((f) => f.name === "rateguard_gossip_auth")!;
    assert.equal(auth.type, "GAUGE");
    assert.equal(auth.metrics.filter((m) => m.value === "1").length, 1);
  });

  it("each membership counter is its own stats() field's", async () => {
    // A standalone guard's counters are all 0: distinct values show a
    // metric reading another field.
    const guard = await busyGuard();
    const counters = {
      identityConflicts: 2,
      suspectLooks: 3,
      corrections: 5,
      membersRefused: 7,
      withheldDatagrams: 11,
      withheldBytes: 13,
    };
    const text = prometheusText({ ...guard.stats(), ...counters }, { guard: "a" });
    const families = parsePrometheusTextFormat(text) as Array<{
      name: string;
      metrics: Array<{ value: string }>;
    }>;
    const value = (name: string) => Number(families.find((f) => f.name === name)!.metrics[0].value);
    assert.deepEqual(
      [
        "rateguard_identity_conflicts_total",
        "rateguard_suspect_looks_total",
        "rateguard_corrections_total",
        "rateguard_members_refused_total",
        "rateguard_withheld_datagrams_total",
        "rateguard_withheld_bytes_total",
      ].map(value),
      Object.values(counters),
    );
  });
});

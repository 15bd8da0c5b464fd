/**
 * A guard's metrics as Prometheus text exposition (format 0.0.4), for a
 * `/metrics` endpoint: a `# HELP` and `# TYPE` line per metric, one line per
 * series, labelled with the guard's advertised address.
 *
 * @module
 */

import type { Stats } from "../runtime/stats.ts";
import { type Labels, METRICS } from "./definitions.ts";

/** The content type of the text format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * Renders a stats snapshot; `guard` labels every series (the advertised
 * address, or "standalone").
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 * import { prometheusText } from "@rateguard/guard/metrics";
 *
 * const guard = await Guard.builder().limit(10).spawn();
 * guard.check("k");
 * const text = prometheusText(guard.stats(), { guard: "standalone" });
 * assert(text.includes('rateguard_checks_total{guard="standalone",decision="allow"} 1'));
 * ```
 *
 * @param stats A guard's `stats()`.
 * @param labels `guard`: the value of the `guard` label on every series.
 * @returns The text exposition format, for `PROMETHEUS_CONTENT_TYPE`.
 */
export function prometheusText(stats: Stats, labels: { guard: string }): string {
  const lines: string[] = [];
  for (const m of METRICS) {
    lines.push(`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.kind}`);
    for (const [series, value] of m.series(stats)) {
      lines.push(
        `${m.name}${renderLabels({ guard: labels.guard, ...series })} ${renderValue(value)}`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

function renderLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function renderValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

function escapeHelp(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

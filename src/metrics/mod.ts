/**
 * Metrics of a guard: through OpenTelemetry's API, and as Prometheus text.
 * A subpath of its own, so that a guard alone never loads
 * `@opentelemetry/api`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard } from "@rateguard/guard";
 * import { prometheusText, registerMetrics } from "@rateguard/guard/metrics";
 *
 * const guard = await Guard.builder().limit(100).spawn();
 * registerMetrics(guard).unregister();
 * assert(prometheusText(guard.stats(), { guard: "standalone" }).startsWith("# HELP"));
 * ```
 *
 * @module
 */

export { type Labels, type MetricDefinition, METRICS } from "./definitions.ts";
export { type MetricsRegistration, type MetricsSource, registerMetrics } from "./otel.ts";
export { PROMETHEUS_CONTENT_TYPE, prometheusText } from "./prometheus.ts";

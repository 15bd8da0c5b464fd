/**
 * A guard's metrics through OpenTelemetry's API: observable instruments,
 * read from one `stats()` snapshot per collection, in a batch callback.
 * Nothing is recorded on the request path. Install any SDK and exporter
 * (Prometheus, OTLP); without one, the API's no-op meter makes this free.
 *
 * @module
 */

import {
  type BatchObservableCallback,
  type Meter,
  metrics,
  type Observable,
} from "@opentelemetry/api";
import type { Stats } from "../runtime/stats.ts";
import { METRICS } from "./definitions.ts";

/** What `registerMetrics` needs of a guard. */
export interface MetricsSource {
  /** A snapshot of the guard's figures. */
  stats(): Stats;
  /** The advertised address, or undefined for a standalone guard. */
  address(): string | undefined;
}

/** A registration, to stop publishing. */
export interface MetricsRegistration {
  /** Stops reporting this guard's figures. */
  unregister(): void;
}

/**
 * Publishes a guard's figures as `rateguard_*` instruments of `meter`
 * (default: the global meter provider's "rateguard" meter), every series
 * labelled `guard` with the advertised address.
 *
 * @example
 * ```ts
 * import { Guard } from "@rateguard/guard";
 * import { registerMetrics } from "@rateguard/guard/metrics";
 *
 * const guard = await Guard.builder().limit(100).spawn();
 * const registration = registerMetrics(guard); // the global meter; free until an SDK is installed
 * registration.unregister();
 * ```
 *
 * @param guard The guard, or anything with its `stats()` and `address()`.
 * @param options `meter`: where the instruments go (default: the global provider's "rateguard" meter).
 * @returns A registration, whose `unregister()` stops publishing.
 */
export function registerMetrics(
  guard: MetricsSource,
  options: { meter?: Meter } = {},
): MetricsRegistration {
  const meter = options.meter ?? metrics.getMeter("rateguard");
  const label = guard.address() ?? "standalone";
  const instruments: Observable[] = METRICS.map((m) => {
    const opts = { description: m.help };
    return m.kind === "counter"
      ? meter.createObservableCounter(m.name, opts)
      : meter.createObservableGauge(m.name, opts);
  });
  // One snapshot per collection, whatever the number of instruments.
  const callback: BatchObservableCallback = (observer) => {
    const stats = guard.stats();
    METRICS.forEach((m, i) => {
      for (const [labels, value] of m.series(stats)) {
        observer.observe(instruments[i], value, { guard: label, ...labels });
      }
    });
  };
  meter.addBatchObservableCallback(callback, instruments);
  return { unregister: () => meter.removeBatchObservableCallback(callback, instruments) };
}

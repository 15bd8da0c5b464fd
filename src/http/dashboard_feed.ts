/**
 * What the dashboard shows, sampled once a second off the request path:
 * the guard's stats and fleet view, rates from one sample to the next, and
 * the last minutes of admitted and denied a second. A request for the data
 * is answered with the last sample, already serialised.
 *
 * The sampler starts with the first request and stops after
 * {@link FEED_IDLE_MS} without one, or once the guard stops, so a sidecar
 * nobody watches does no work for it.
 *
 * @module
 */

import type { Guard } from "../runtime/guard.ts";
import type { Stats } from "../runtime/stats.ts";
import type { GossipCounters } from "../runtime/gossip.ts";
import type { HotKeyView, NamedDeniedKey } from "../runtime/fleet_view.ts";

/** How often the feed samples, ms: the page polls no faster. */
export const FEED_PERIOD_MS = 1_000;

/** Samples of the rates kept for the chart: five minutes at one a second. */
export const FEED_HISTORY = 300;

/** The sampler stops after this long without a request for the data. */
export const FEED_IDLE_MS = 300_000;

/** The rules in force, as the admin routes list them. */
export interface RulesView {
  readonly classes: readonly unknown[];
  readonly keyLimits: readonly unknown[];
  readonly shadows: readonly unknown[];
}

/** A counter taken at one sample, and when. */
interface Sample {
  readonly atMs: number;
  readonly stats: Stats;
  readonly traffic: GossipCounters | undefined;
}

type Timer = ReturnType<typeof setInterval>;

/** The runtime's way of letting a timer not keep the process alive. */
function unref(timer: Timer): void {
  const deno = (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno;
  if (typeof timer === "number") deno?.unrefTimer?.(timer);
  else (timer as { unref?: () => void }).unref?.();
}

/** See the module doc. */
export class DashboardFeed {
  readonly #guard: Guard;
  readonly #rules: () => RulesView;
  readonly #now: () => number;
  #timer: Timer | undefined;
  #last: Sample | undefined;
  #lastAskedMs = 0;
  #body = "";
  readonly #admitted: number[] = [];
  readonly #denied: number[] = [];
  readonly #shadowDenied: number[] = [];

  /**
   * A feed of `guard`, listing the rules `rules` gives.
   *
   * @param guard The guard to show.
   * @param rules The classes, key limits and shadows in force, as the admin routes list them.
   * @param now The wall clock, ms (a test's own).
   */
  constructor(guard: Guard, rules: () => RulesView, now: () => number = Date.now) {
    this.#guard = guard;
    this.#rules = rules;
    this.#now = now;
  }

  /**
   * The last sample as JSON; starts the sampler if it is not running.
   *
   * @returns The serialised snapshot.
   */
  current(): string {
    this.#lastAskedMs = this.#now();
    if (this.#timer === undefined) {
      this.sample();
      if (this.#guard.isRunning()) {
        this.#timer = setInterval(() => this.#tick(), FEED_PERIOD_MS);
        unref(this.#timer);
      }
    }
    return this.#body;
  }

  /** Whether the sampler runs. */
  get sampling(): boolean {
    return this.#timer !== undefined;
  }

  /** Stops the sampler; the next request starts it again. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    if (this.#now() - this.#lastAskedMs > FEED_IDLE_MS) return this.stop();
    this.sample();
    if (!this.#guard.isRunning()) this.stop();
  }

  /** Takes one sample now (the timer's work; public for tests on their own clock). */
  sample(): void {
    const atMs = this.#now();
    const next: Sample = { atMs, stats: this.#guard.stats(), traffic: this.#guard.traffic() };
    const prev = this.#last;
    const dtSec = prev === undefined ? 0 : (atMs - prev.atMs) / 1_000;
    const rate = (now: number, then: number | undefined) =>
      dtSec > 0 && then !== undefined ? Math.max(0, now - then) / dtSec : 0;
    // A restarted sampler leaves a gap: the chart starts afresh, from the next sample.
    const fresh = prev === undefined || atMs - prev.atMs > 3 * FEED_PERIOD_MS;
    const s = next.stats;
    if (fresh) {
      for (const series of [this.#admitted, this.#denied, this.#shadowDenied]) series.length = 0;
    } else {
      push(this.#admitted, rate(s.admitted, prev.stats.admitted));
      push(this.#denied, rate(s.denied, prev.stats.denied));
      push(this.#shadowDenied, rate(s.shadowDenied, prev.stats.shadowDenied));
    }
    const t = next.traffic;
    const p = fresh ? undefined : prev;
    const view = this.#guard.fleetView();
    const addresses = new Map(view.members.map((m) => [m.id, m.address]));
    if (view.id !== undefined && view.address !== undefined) addresses.set(view.id, view.address);
    this.#body = JSON.stringify({
      atMs,
      periodMs: FEED_PERIOD_MS,
      self: { address: view.address ?? null, id: view.id ?? null },
      running: s.running,
      dryRun: s.dryRun,
      gossipAuth: s.gossipAuth,
      admitted: s.admitted,
      denied: s.denied,
      shadowDenied: s.shadowDenied,
      trackedKeys: s.trackedKeys,
      overflowed: s.overflowed,
      fleet: {
        clusterSize: s.clusterSize,
        countedSize: s.countedSize,
        suspects: s.suspects,
        hotKeys: s.hotKeys,
        heldBecause: heldReasons(s),
      },
      members: view.members,
      gossip: t === undefined ? null : {
        datagramsSentPerSec: rate(t.datagramsSent, p?.traffic?.datagramsSent),
        bytesSentPerSec: rate(t.bytesSent, p?.traffic?.bytesSent),
        datagramsReceivedPerSec: rate(t.datagramsReceived, p?.traffic?.datagramsReceived),
        bytesReceivedPerSec: rate(t.bytesReceived, p?.traffic?.bytesReceived),
        socketErrors: t.socketErrors,
        sinceLastRoundMs: s.sinceLastRoundMs,
        rejected: s.rejectedDatagrams,
        withheldDatagrams: s.withheldDatagrams,
        cutRecords: s.cutRecords,
      },
      series: {
        admittedPerSec: this.#admitted,
        deniedPerSec: this.#denied,
        shadowDeniedPerSec: this.#shadowDenied,
      },
      hotKeys: view.hotKeys.map((h) => hotKeyJson(h, addresses, view.id)),
      mostDenied: view.mostDenied.map(deniedJson),
      mostShadowDenied: view.mostShadowDenied.map(deniedJson),
      rules: this.#rules(),
      fleetRules: fleetRulesJson(s),
    });
    this.#last = next;
  }
}

function push(series: number[], value: number): void {
  series.push(value);
  if (series.length > FEED_HISTORY) series.shift();
}

/** The fleet rules' state, for the out-of-step marker and the refusals; null when not shared. */
function fleetRulesJson(s: Stats): Record<string, unknown> | null {
  const r = s.rules;
  if (!r.shared) return null;
  return {
    learning: r.learning,
    digest: r.digest,
    live: r.live,
    outOfStep: r.outOfStep,
    apartMs: r.apartMs,
    outOfStepReason: r.outOfStepReason,
    malformed: r.malformed,
    refused: r.refused,
    refusals: r.refusals,
    lastRefusal: r.lastRefusal,
    entries: r.entries,
    bound: r.bound,
    own: r.own,
    peers: r.peers,
    tableFull: r.tableFull,
    tableFullReason: r.tableFullReason,
  };
}

/** Why every key is held at the floor, in words; empty when none holds. */
function heldReasons(s: Stats): string[] {
  const why: string[] = [];
  if (!s.running) why.push("stopped");
  if (s.joining) why.push(s.joinBlocked || "joining");
  if (s.learning) why.push("learning");
  if (s.withoutQuorum) why.push("without quorum");
  if (s.membersFull) why.push("member table full");
  return why;
}

function hotKeyJson(h: HotKeyView, addresses: Map<string, string>, selfId: string | undefined) {
  return {
    class: h.className,
    key: h.key,
    limitPerSec: h.limitPerSec,
    members: h.members.map((m) => ({
      id: m.id,
      address: addresses.get(m.id) ?? null,
      self: m.id === selfId,
      demandPerSec: m.demand,
      sharePerSec: m.share,
    })),
  };
}

function deniedJson(d: NamedDeniedKey) {
  return {
    class: d.className,
    key: d.key,
    deniedPerSec: d.deniedPerSec,
    requestsPerSec: d.requestsPerSec,
    shadowDeniedPerSec: d.shadowDeniedPerSec,
  };
}

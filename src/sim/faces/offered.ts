/**
 * The traffic a fleet's node is offered: requests at a rate, evenly spaced
 * from a phase of their own, waiting while the node is paused and lost
 * while it is down, and the count of what it admitted and denied.
 *
 * @module
 */

/** What became of requests. */
export interface Counts {
  /** Requests admitted. */
  readonly admitted: number;
  /** Requests denied. */
  readonly denied: number;
  /** Requests the shadow would have denied. */
  readonly shadowDenied: number;
}

/** What a node that decides a request now decided: one of {@link decided}'s four. */
export interface Decided {
  readonly allowed: boolean;
  readonly shadowDenied: boolean;
}

/** What a request meets: a node that decides it now, a paused node, or none. */
export type Served = Decided | "paused" | "down";

/** The four outcomes, made once: a fleet of 1000 is offered 150,000 requests a virtual second. */
const DECIDED: readonly Decided[] = [false, true].flatMap((allowed) =>
  [false, true].map((shadowDenied) => ({ allowed, shadowDenied }))
);

/** The outcome of a request decided now. */
export function decided(allowed: boolean, shadowDenied: boolean): Decided {
  return DECIDED[(allowed ? 2 : 0) + (shadowDenied ? 1 : 0)];
}

/** The requests offered to one node, in virtual time. */
export class Offered {
  readonly #at: (atMs: number, run: () => void) => void;
  readonly #serve: () => Served;
  /** Counts `set` calls, so that the stream of an earlier rate stops. */
  #epoch = 0;
  /** Requests that arrived during a pause. */
  #queued = 0;
  #admitted = 0;
  #denied = 0;
  #shadowDenied = 0;

  /**
   * Requests scheduled with `at` and handed to `serve` as they arrive.
   *
   * @param at Schedules a request's arrival in virtual time.
   * @param serve Hands a request to the node.
   */
  constructor(at: (atMs: number, run: () => void) => void, serve: () => Served) {
    this.#at = at;
    this.#serve = serve;
  }

  /**
   * From `nowMs` on, `perSec` requests a second, the first after `phase`
   * (0 to 1) of a gap, so that nodes' requests do not line up.
   *
   * @param perSec Requests a second, 0 for none.
   * @param nowMs Virtual time now, ms.
   * @param phase Where in its first gap the first request falls, 0 to 1.
   */
  set(perSec: number, nowMs: number, phase: number): void {
    const epoch = ++this.#epoch;
    if (!(perSec > 0)) return;
    let nextMs = nowMs + phase * (1_000 / perSec);
    const arrive = () => {
      if (this.#epoch !== epoch) return;
      this.#record(this.#serve());
      nextMs += 1_000 / perSec;
      this.#at(nextMs, arrive);
    };
    this.#at(nextMs, arrive);
  }

  /** Serves the requests that waited through a pause, now that it is over. */
  drain(): void {
    const queued = this.#queued;
    this.#queued = 0;
    for (let i = 0; i < queued; i++) this.#record(this.#serve());
  }

  /**
   * What became of the requests since the last call, and zeroes the counts.
   *
   * @returns The counts.
   */
  take(): Counts {
    const counts = {
      admitted: this.#admitted,
      denied: this.#denied,
      shadowDenied: this.#shadowDenied,
    };
    this.#admitted = this.#denied = this.#shadowDenied = 0;
    return counts;
  }

  #record(served: Served): void {
    if (served === "down") return;
    if (served === "paused") {
      this.#queued++;
      return;
    }
    if (served.allowed) this.#admitted++;
    else this.#denied++;
    if (served.shadowDenied) this.#shadowDenied++;
  }
}

/**
 * The generic cell rate algorithm (GCRA) in integer arithmetic. A key's
 * state is a debt: what it was admitted and has not yet paid back, as of an
 * instant of the time base (whole microseconds, see `time.ts`); its
 * theoretical arrival time is that instant plus the debt's worth of time.
 * Time is passed in; nothing here reads a clock, so a decision is a pure
 * function of (state, rule, cost, now), and the read-modify-write of a
 * check has no await in it: the race of reading a state, yielding, and
 * writing it back cannot happen.
 *
 * Debts are counted in units: one request costs `unitsPerRequest` units
 * and the clock pays back `unitsPerUs` a microsecond. For a limit at its
 * own rate both are integers (a count per period, over their greatest
 * common divisor, scaled up as far as a debt of twice the burst stays
 * below 2^51), so its decisions are exact: no float sum drifts, and no
 * slack is needed anywhere. A share of a limit (its rate times a fraction,
 * in a fleet) pays back a fractional number of units a microsecond, rounded
 * down, the strict way: each admission forgoes less than one unit, at most
 * 2^-27 of a request, and the durations it reports may run a microsecond
 * long, never short. (So does a per-hour limit whose burst is so large
 * that its integer units would not fit, over 312,000 requests.)
 *
 * @module
 */

import { Decision } from "./decision.ts";
import { US_PER_MS, usToMs } from "./time.ts";

/**
 * A limit resolved into what the algorithm needs: what a request costs and
 * what a microsecond pays back, in units of debt, and the tolerance (the
 * burst, as debt).
 */
export interface Rate {
  /** Requests a second. */
  readonly perSec: number;
  /** Requests admitted back to back from a full bucket. */
  readonly burst: number;
  /** The debt one request of cost 1 adds: a whole number. */
  readonly unitsPerRequest: number;
  /** The debt a microsecond pays back: whole at a limit's own rate. */
  readonly unitsPerUs: number;
  /** `burst × unitsPerRequest`: the most a key may owe after an admission. */
  readonly toleranceUnits: number;
  /** `1 / unitsPerRequest`, so the request path multiplies (and corrects the rounding). */
  readonly requestsPerUnit: number;
  /** `1 / unitsPerUs`, likewise. */
  readonly usPerUnit: number;
  /**
   * The half unit by which durations are computed (see `paidInUs`): -1/2
   * when `unitsPerUs` is whole, as at a limit's own rate, which makes them
   * exact; +1/2 for a share, which makes them at most a microsecond long.
   */
  readonly halfUnit: number;
  /**
   * `allowedOwing[k]`: the decision of an admission that leaves the key
   * owing exactly `k` requests as of now, for `k` up to {@link OWING_MEMO}
   * (and the burst), made the first time it is needed. A key that owed
   * nothing, and a hot key checked again in the same microsecond, get one
   * of these: no arithmetic and no allocation. They are frozen, since every
   * such admission shares one.
   */
  readonly allowedOwing: (Decision | undefined)[];
}

/**
 * Entries of {@link Rate.allowedOwing} past 0: more checks of one key than
 * any runtime makes in a microsecond.
 */
const OWING_MEMO = 64;

/**
 * The largest tolerance in units: twice it (a debt up to the tolerance plus
 * a cost up to the burst) stays below 2^51, where the quotients of the
 * decisions' durations and rooms are exact.
 */
const MAX_TOLERANCE_UNITS = 2 ** 50;

/**
 * The {@link Rate} of `count` requests per `periodMs` with a burst, scaled
 * by `scale` (1 at the limit's own rate, a fraction for a share of it). The
 * burst is at least 1 and may be fractional (see `sharedBurstOf`).
 */
export function rateOf(count: number, periodMs: number, burst: number, scale = 1): Rate {
  const periodUs = periodMs * US_PER_MS;
  const g = gcd(periodUs, count);
  const base = periodUs / g;
  const times = Math.floor(MAX_TOLERANCE_UNITS / (burst * base));
  let unitsPerRequest: number, unitsPerUs: number;
  if (times >= 1) {
    unitsPerRequest = base * times;
    unitsPerUs = (count / g) * times * scale;
  } else {
    unitsPerRequest = Math.floor(MAX_TOLERANCE_UNITS / burst);
    unitsPerUs = (unitsPerRequest * count * scale) / periodUs;
  }
  const rate = {
    perSec: (count * 1_000 * scale) / periodMs,
    // A fractional burst (a share of a shared one) admits its whole part
    // back to back; the rest is slack that absorbs the jitter of arrivals.
    burst: Math.floor(burst),
    unitsPerRequest,
    unitsPerUs,
    toleranceUnits: Math.floor(burst * unitsPerRequest),
    requestsPerUnit: 1 / unitsPerRequest,
    usPerUnit: 1 / unitsPerUs,
    halfUnit: Number.isInteger(unitsPerUs) ? -0.5 : 0.5,
    allowedOwing: new Array<Decision | undefined>(Math.floor(Math.min(burst, OWING_MEMO)) + 1)
      .fill(undefined),
  };
  return rate;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** What a debt of `debt` as of `atUs` has come down to at `nowUs` (not before `atUs`). */
export function owedAt(debt: number, atUs: number, rate: Rate, nowUs: number): number {
  if (nowUs <= atUs) return debt;
  const paid = (nowUs - atUs) * rate.unitsPerUs;
  return paid >= debt ? 0 : debt - Math.floor(paid);
}

/**
 * The debt after admitting `cost` now, as of `max(atUs, nowUs)`, or `NaN` if
 * the request is denied. Consumes nothing: the caller stores the result
 * (and the later of the two instants) to commit it.
 */
export function admitDebt(
  debt: number,
  atUs: number,
  rate: Rate,
  cost: number,
  nowUs: number,
): number {
  const next = owedAt(debt, atUs, rate, nowUs) + cost * rate.unitsPerRequest;
  return next <= rate.toleranceUnits ? next : NaN;
}

/**
 * The microseconds after which the clock has paid back `units` (whole, and
 * at most 2^50), by the test {@link owedAt} takes: floor(us × v) ≥ units,
 * which for whole units is us × v ≥ units. With a whole refill v,
 * ceil((units - 1/2) / v) is the fewest such, exactly: the half unit is
 * margin for the reciprocal's rounding, below half a unit at these sizes.
 * With a share's fractional v, ceil((units + 1/2) / v) passes the test by
 * that margin, at most a microsecond later than the fewest: never early.
 */
function paidInUs(units: number, rate: Rate): number {
  return units > 0 ? Math.ceil((units + rate.halfUnit) * rate.usPerUnit) : 0;
}

/** How many requests of cost 1 fit on top of a debt. */
function roomFor(owed: number, rate: Rate): number {
  const room = rate.toleranceUnits - owed;
  // floor((room + 1/2) / u) is floor(room / u) for whole room and u, with
  // the half unit as margin for the reciprocal; at most the burst, so `| 0`
  // truncates, which is the floor for what is not negative.
  return room > 0 ? ((room + 0.5) * rate.requestsPerUnit) | 0 : 0;
}

/**
 * The decision for an admission that left the debt `next` as of `atUs` (not
 * before now): {@link allowedByArithmetic}'s, looked up where it can be.
 * After an admission the debt is as of now unless the key is blocked, and a
 * key that owed nothing, or a hot key checked again in the same
 * microsecond, owes a whole number of requests: the rule keeps the one
 * decision for each such debt ({@link Rate.allowedOwing}), made the first
 * time by the arithmetic. Kept this small so that the JITs inline it into
 * the request path.
 */
export function allowedDecision(next: number, atUs: number, rate: Rate, nowUs: number): Decision {
  // `>>> 0`: a count past 2^32 wraps, never to an index of the table.
  const owing = (next * rate.requestsPerUnit + 0.5) >>> 0;
  const memo = rate.allowedOwing;
  return atUs === nowUs && owing < memo.length && owing * rate.unitsPerRequest === next
    ? memo[owing] ?? rememberOwing(rate, owing)
    : allowedByArithmetic(next, atUs, rate, nowUs);
}

function rememberOwing(rate: Rate, owing: number): Decision {
  const decision = allowedByArithmetic(owing * rate.unitsPerRequest, 0, rate, 0);
  return rate.allowedOwing[owing] = Object.freeze(decision);
}

/**
 * {@link allowedDecision} by arithmetic alone, with no lookup.
 *
 * @internal Exported for the tests, which check the lookups against it.
 */
export function allowedByArithmetic(
  next: number,
  atUs: number,
  rate: Rate,
  nowUs: number,
): Decision {
  return new Decision(true, 0, roomFor(next, rate), usToMs(atUs - nowUs + paidInUs(next, rate)));
}

/** The decision for a request of `cost` that was denied with the debt `debt` as of `atUs`. */
export function deniedDecision(
  debt: number,
  atUs: number,
  rate: Rate,
  cost: number,
  nowUs: number,
): Decision {
  const retryAfterMs = cost > rate.burst ? Infinity : usToMs(Math.max(
    0,
    atUs + paidInUs(debt + cost * rate.unitsPerRequest - rate.toleranceUnits, rate) - nowUs,
  ));
  return new Decision(
    false,
    retryAfterMs,
    roomFor(owedAt(debt, atUs, rate, nowUs), rate),
    fullInMs(debt, atUs, rate, nowUs),
  );
}

/**
 * How long a request of `cost` waits in line behind requests costing
 * `aheadCost` in all, if each before it is admitted as soon as it fits and
 * nothing else is: 0 if it would fit now, `Infinity` for a cost above the
 * burst. `owed` is the debt as of `fromUs`, the later of its instant and
 * now (see {@link owedAt}): a debt paid off long ago gives the line no head
 * start.
 */
export function queuedWaitMs(
  owed: number,
  fromUs: number,
  rate: Rate,
  cost: number,
  aheadCost: number,
  nowUs: number,
): number {
  if (cost > rate.burst) return Infinity;
  const over = owed + (aheadCost + cost) * rate.unitsPerRequest - rate.toleranceUnits;
  return usToMs(Math.max(0, fromUs + paidInUs(over, rate) - nowUs));
}

/** The denial of a request of `cost` that waited in line behind `aheadCost` ({@link queuedWaitMs}). */
export function queuedDenial(
  debt: number,
  atUs: number,
  rate: Rate,
  cost: number,
  aheadCost: number,
  nowUs: number,
): Decision {
  const owed = owedAt(debt, atUs, rate, nowUs);
  const waitMs = queuedWaitMs(owed, Math.max(atUs, nowUs), rate, cost, aheadCost, nowUs);
  return new Decision(false, waitMs, roomFor(owed, rate), fullInMs(debt, atUs, rate, nowUs));
}

/** How long until a debt of `debt` as of `atUs` is paid back in full, from `nowUs`. */
export function fullInMs(debt: number, atUs: number, rate: Rate, nowUs: number): number {
  return usToMs(Math.max(0, atUs + paidInUs(debt, rate) - nowUs));
}

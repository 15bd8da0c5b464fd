// Test support: fleets of real processes on 127.0.0.1, each a
// tests/support/fleet_member.ts, with their per-second reports.
import { type RuntimeName, start, type Started } from "../support/process.ts";

export interface Report {
  atMs: number;
  /** The time this report's counts cover, ending at `atMs`. */
  spanMs: number;
  traffic: {
    datagramsSent: number;
    bytesSent: number;
    datagramsReceived: number;
    socketErrors: number;
    unsigned: number;
    badTag: number;
  };
  cpuMicros: number;
  admitted: number;
  denied: number;
  clusterSize: number;
  countedSize: number;
  /** Members this one has not heard from lately. */
  suspects: number;
  share: number;
  running: boolean;
}

export interface Member {
  readonly process: Started;
  readonly address: string;
  reports(): Report[];
}

/** How a member process is started. */
export interface MemberOptions {
  seeds?: string;
  /** The address to bind, `127.0.0.1:0` (a free port) by default. */
  bind?: string;
  rate: number;
  limit: number;
  runtime?: RuntimeName;
  policy?: string;
  periodMs?: number;
  auth?: [mode: string, base64Secret?: string];
  /** Requests admitted back to back (10 by default). */
  burst?: number;
  /** How often it reports, 1000 ms by default. */
  reportMs?: number;
}

export async function startMember(options: MemberOptions): Promise<Member> {
  const p = start("tests/support/fleet_member.ts", memberArgs(options), {
    runtime: options.runtime,
  });
  return await ready(p);
}

/**
 * A member process loaded but not yet bound: `start()` binds and joins at
 * once, so that a restart takes milliseconds rather than a runtime's start.
 */
export async function standbyMember(
  options: MemberOptions,
): Promise<{ readonly process: Started; start(): Promise<Member> }> {
  const args = ["--standby", ...memberArgs(options)];
  const p = start("tests/support/fleet_member.ts", args, { runtime: options.runtime });
  try {
    await p.waitFor(/"standby":true/, 30_000);
  } catch (e) {
    p.kill();
    throw e;
  }
  return {
    process: p,
    start: () => {
      p.send("start");
      return ready(p);
    },
  };
}

function memberArgs(options: MemberOptions): string[] {
  const args = ["--limit", String(options.limit), "--rate", String(options.rate)];
  if (options.bind) args.push("--bind", options.bind);
  if (options.auth) {
    args.push("--auth", options.auth[0], ...(options.auth[1] ? ["--secret", options.auth[1]] : []));
  }
  if (options.periodMs) args.push("--period", String(options.periodMs));
  if (options.seeds) args.push("--seeds", options.seeds);
  if (options.policy) args.push("--policy", options.policy);
  if (options.burst !== undefined) args.push("--burst", String(options.burst));
  if (options.reportMs) args.push("--report-ms", String(options.reportMs));
  return args;
}

/** The member `p` once it says it is ready; killed if it never does. */
async function ready(p: Started): Promise<Member> {
  try {
    const [, address] = await p.waitFor(/"ready":"([^"]+)"/, 30_000);
    return {
      process: p,
      address,
      reports: () =>
        p.stdout().split("\n").filter((l) => l.startsWith('{"atMs"')).map((l) =>
          JSON.parse(l) as Report
        ),
    };
  } catch (e) {
    p.kill();
    throw e;
  }
}

/** What the members of a fleet share; `runtimes[i]` runs member i. */
export type FleetOptions = Omit<MemberOptions, "seeds" | "bind" | "rate" | "runtime"> & {
  runtimes?: readonly RuntimeName[];
  /** Members started at once after the seed (1 by default: one by one). */
  concurrency?: number;
};

/** Starts a fleet: the first member is everyone's seed. */
export async function startFleet(
  rates: readonly number[],
  options: FleetOptions,
): Promise<Member[]> {
  const { runtimes, concurrency = 1, ...shared } = options;
  const members: Member[] = [];
  const one = (i: number, seeds?: string) =>
    startMember({ ...shared, seeds, rate: rates[i], runtime: runtimes?.[i] });
  try {
    if (rates.length > 0) members.push(await one(0));
    for (let i = 1; i < rates.length; i += concurrency) {
      const seed = members[0].address;
      const batch = rates.slice(i, i + concurrency).map((_, j) => one(i + j, seed));
      // Each settles (its process killed if it failed) before any throws.
      const round = await Promise.allSettled(batch);
      for (const r of round) if (r.status === "fulfilled") members.push(r.value);
      const failed = round.find((r) => r.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    return members;
  } catch (e) {
    for (const m of members) m.process.kill();
    throw e;
  }
}

export function stopAll(members: readonly Member[]): void {
  for (const m of members) m.process.kill();
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

/** A member's reports made in [fromMs, toMs). */
function reportsIn(m: Member, fromMs: number, toMs: number): Report[] {
  return m.reports().filter((r) => r.atMs >= fromMs && r.atMs < toMs);
}

/**
 * The fleet's admission rate per second over the reports made in
 * [fromMs, toMs): each member's admitted count over the time its reports
 * cover, summed over members. Dividing by the window instead would count a
 * member whose report fell a few milliseconds past the end as a third short.
 */
function fleetRate(members: readonly Member[], fromMs: number, toMs: number): number {
  let rate = 0;
  for (const m of members) {
    const reports = reportsIn(m, fromMs, toMs);
    const spanMs = reports.reduce((sum, r) => sum + r.spanMs, 0);
    if (spanMs > 0) rate += (reports.reduce((sum, r) => sum + r.admitted, 0) * 1000) / spanMs;
  }
  return rate;
}

/** How many the fleet admitted in the reports made in [fromMs, toMs). */
export function fleetAdmitted(members: readonly Member[], fromMs: number, toMs: number): number {
  return members.reduce(
    (sum, m) => sum + reportsIn(m, fromMs, toMs).reduce((n, r) => n + r.admitted, 0),
    0,
  );
}

/** Lets the fleet settle for `settleMs`, then measures its rate over the next `measureMs`. */
export async function settledRate(
  members: readonly Member[],
  settleMs: number,
  measureMs: number,
): Promise<number> {
  await sleep(settleMs);
  const fromMs = Date.now();
  await sleep(measureMs);
  return fleetRate(members, fromMs, Date.now());
}

/** What a member sent and spent per second between two of its reports. */
export function perSecondBetween(
  first: Report,
  last: Report,
): { datagrams: number; bytes: number; cpuMs: number } {
  const seconds = (last.atMs - first.atMs) / 1000;
  return {
    datagrams: (last.traffic.datagramsSent - first.traffic.datagramsSent) / seconds,
    bytes: (last.traffic.bytesSent - first.traffic.bytesSent) / seconds,
    cpuMs: (last.cpuMicros - first.cpuMicros) / 1000 / seconds,
  };
}

/** The most recent report of a member. */
export function latest(m: Member): Report | undefined {
  const all = m.reports();
  return all[all.length - 1];
}

/** Waits until every member reports `clusterSize` members. */
export async function waitForSize(
  members: readonly Member[],
  size: number,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (members.every((m) => latest(m)?.clusterSize === size)) return;
    await sleep(200);
  }
  throw new Error(
    `cluster did not reach ${size}: ${members.map((m) => latest(m)?.clusterSize).join(",")}`,
  );
}

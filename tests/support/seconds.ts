import type { Fleet } from "../../src/sim/faces/fleet.ts";
import { R } from "../../src/sim/accuracy/run.ts";

/**
 * Runs `fleet` from `fromMs` to `toMs` and returns what its nodes admitted
 * each second, in units of R (what they admitted before `fromMs` is dropped).
 */
export function secondsAdmitted(fleet: Fleet, fromMs: number, toMs: number): number[] {
  for (let i = 0; i < fleet.size; i++) fleet.take(i);
  const seconds: number[] = [];
  for (let t = fromMs; t < toMs; t += 1_000) {
    fleet.runUntil(t + 1_000);
    let admitted = 0;
    for (let i = 0; i < fleet.size; i++) admitted += fleet.take(i).admitted;
    seconds.push(admitted / R);
  }
  return seconds;
}

// Test support: an enforcer on virtual time.
import { Enforcer } from "../../src/core/enforcer.ts";
import type { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";

export interface Rig {
  book: LimitBook;
  enforcer: Enforcer;
}

export function rig(
  limit: Limit,
  options: {
    capacity?: number;
    maxKeyLimits?: number;
    maxClasses?: number;
    maxKeyBytes?: number;
  } = {},
): Rig {
  const book = new LimitBook(limit, {
    maxClasses: options.maxClasses ?? 64,
    maxKeyLimits: options.maxKeyLimits ?? 4096,
    maxKeyBytes: options.maxKeyBytes,
  });
  const enforcer = new Enforcer(book, { capacity: options.capacity ?? 8192, overflowScale: 0.5 });
  return { book, enforcer };
}

/** Offers `perSec` requests a second for `seconds` from `startMs`; returns how many were admitted. */
export function offer(
  r: Rig,
  key: string,
  options: { perSec: number; seconds: number; startMs?: number; className?: string },
): number {
  let admitted = 0;
  const start = options.startMs ?? 0;
  const n = Math.round(options.perSec * options.seconds);
  for (let i = 0; i < n; i++) {
    const t = start + (i * 1000) / options.perSec;
    if (r.enforcer.check(options.className ?? "", key, 1, t).allowed) admitted++;
  }
  return admitted;
}

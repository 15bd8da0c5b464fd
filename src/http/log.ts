/**
 * The sidecar's log: one line per event on stderr, as text for people or
 * JSON for a log pipeline.
 *
 * @module
 */

import type { LogFormat } from "./cli_args.ts";

/** Values a log line carries beside its message. */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

/** Writes one line per event. */
export interface Logger {
  /** Something worth knowing happened. */
  info(message: string, fields?: LogFields): void;
  /** Something went wrong and the sidecar carries on. */
  warn(message: string, fields?: LogFields): void;
}

/** A logger writing lines through `write` (stderr in the sidecar). */
export function lineLogger(format: LogFormat, write: (line: string) => void): Logger {
  const line = (level: "info" | "warn", message: string, fields: LogFields = {}): void => {
    const time = new Date().toISOString();
    if (format === "json") {
      write(JSON.stringify({ time, level, msg: message, ...fields }) + "\n");
      return;
    }
    let text = `${time} ${level.toUpperCase()} rateguard: ${message}`;
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      // Quote values with spaces so a line splits back into its fields.
      text += ` ${k}=${typeof v === "string" && /[\s"=]/.test(v) ? JSON.stringify(v) : v}`;
    }
    write(text + "\n");
  };
  return {
    info: (message, fields) => line("info", message, fields),
    warn: (message, fields) => line("warn", message, fields),
  };
}

/** A logger that drops every line: the default of an embedded sidecar app. */
export const silentLogger: Logger = { info: () => {}, warn: () => {} };

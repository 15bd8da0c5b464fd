/**
 * The fenced blocks of a Markdown page, as the docs test and the package test
 * read the README's examples and commands: one parser, so what the one runs
 * is what the other checks.
 *
 * @module
 */

import { readFileSync } from "node:fs";

/** A fenced block of a page: its info string (`ts`, `sh`, `ts ignore`), its text, its line. */
export interface Block {
  readonly page: string;
  readonly lang: string;
  readonly text: string;
  readonly line: number;
}

/** The fenced blocks of `page` (a path), in order; `text` is the page's text when given. */
export function blocks(page: string, text: string = readFileSync(page, "utf8")): Block[] {
  const out: Block[] = [];
  let open: { lang: string; line: number; lines: string[] } | undefined;
  for (const [i, line] of text.split("\n").entries()) {
    if (open === undefined && line.startsWith("```")) {
      open = { lang: line.slice(3).trim(), line: i + 1, lines: [] };
    } else if (open !== undefined && line.startsWith("```")) {
      out.push({ page, lang: open.lang, text: open.lines.join("\n"), line: open.line });
      open = undefined;
    } else open?.lines.push(line);
  }
  return out;
}

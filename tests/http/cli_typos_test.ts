// A typo never opens a door: a misspelt variable, an unknown or repeated
// field of a class, a flag given twice all exit 2 naming what is wrong, and
// every switch the file or the environment sets can be turned off by a flag.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HELP, parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";
import { ENV_NAMES, RESERVED_ENV } from "../../src/http/cli_flags.ts";
import { start } from "../support/process.ts";

/** What CI and the tests set for their own tooling, and the clients read: not the sidecar's. */
const RESERVED = [
  "RATEGUARD_PG_URL",
  "RATEGUARD_PG_INSTALL",
  "RATEGUARD_PG_REQUIRED",
  "RATEGUARD_PG_DIR",
  "RATEGUARD_BROWSER_REQUIRED",
  "RATEGUARD_RUNTIME",
  "RATEGUARD_URL",
];

const run = (argv: string[], env: Record<string, string> = {}, file?: unknown) => {
  const p = parseSidecarArgs(argv, env, () => JSON.stringify(file));
  assert.equal(p.kind, "run");
  return p.kind === "run" ? p.config : undefined!;
};

/** Refused with exactly `message`, on one line. */
const refused = (argv: string[], env: Record<string, string>, message: string | RegExp) =>
  assert.throws(
    () => parseSidecarArgs(argv, env, () => '{"dry-run": true}'),
    (e) => {
      assert.ok(e instanceof UsageError, String(e));
      if (typeof message === "string") assert.equal(e.message, message);
      else assert.match(e.message, message);
      assert.ok(!e.message.includes("\n"), e.message);
      return true;
    },
  );

describe("sidecar flags: an unknown RATEGUARD_ variable", () => {
  it("is refused, naming it and the nearest variable the sidecar reads", () => {
    refused(
      ["--limit", "1"],
      { RATEGUARD_ADMIN_TOKEN_FLE: "/run/token" },
      "unknown environment variable RATEGUARD_ADMIN_TOKEN_FLE (did you mean RATEGUARD_ADMIN_TOKEN_FILE?)",
    );
    // The clients' token is not the sidecar's: the sidecar reads a file.
    refused(
      ["--limit", "1"],
      { RATEGUARD_ADMIN_TOKEN: "t0ken" },
      "unknown environment variable RATEGUARD_ADMIN_TOKEN (did you mean RATEGUARD_ADMIN_TOKEN_FILE?)",
    );
    refused(
      [],
      { RATEGUARD_LIMT: "5/s" },
      /^unknown environment variable RATEGUARD_LIMT \(did you mean RATEGUARD_LIMIT\?\)$/,
    );
    refused(
      ["--limit", "1"],
      { rateguard_dry_run: "1" },
      /rateguard_dry_run \(did you mean RATEGUARD_DRY_RUN\?\)$/,
    );
    refused(
      ["--limit", "1"],
      { RATEGUARD_HELP: "1" },
      /^unknown environment variable RATEGUARD_HELP\b/,
    );
    // Nothing near it: no guess, but where the names are.
    refused(
      ["--limit", "1"],
      { RATEGUARD_ZZ: "" },
      "unknown environment variable RATEGUARD_ZZ (--help lists the variables)",
    );
  });

  it("leaves the names reserved for the project's tooling and clients alone", () => {
    const env = Object.fromEntries(RESERVED.map((name) => [name, "1"]));
    assert.equal(String(run(["--limit", "5/s"], { ...env, PATH: "/bin" }).limit), "5/s");
  });

  it("reserves every other name the tests, scripts and CI set", () => {
    assert.deepEqual([...RESERVED_ENV].sort(), [...RESERVED].sort());
    const known = new Set([...ENV_NAMES, ...RESERVED_ENV]);
    const files = [
      ".ci/run",
      ...["tests", "scripts", "sdk/go"].flatMap((dir) =>
        readdirSync(dir, { recursive: true }).map((f) => join(dir, String(f)))
      ),
    ].filter((f) => /\.(ts|sh|go)$|run$/.test(f) && !f.endsWith("cli_typos_test.ts"));
    assert.ok(files.includes(join("scripts", "go-test.sh")), "the scan reaches the scripts");
    for (const file of files) {
      for (const [name] of readFileSync(file, "utf8").matchAll(/\bRATEGUARD_[A-Z_]+/g)) {
        // The clients' token goes to client processes only; a sidecar refuses it.
        if (name !== "RATEGUARD_ADMIN_TOKEN") assert.ok(known.has(name), `${name} in ${file}`);
      }
    }
  });

  it("lists the reserved names in --help", () => {
    for (const name of RESERVED) assert.match(HELP, new RegExp(`\\b${name}\\b`), name);
  });
});

describe("sidecar flags: a class's fields", () => {
  it("refuses an unknown field, naming it and the nearest field", () => {
    refused(
      ["--limit", "1", "--class", "free=10/s,bust=20"],
      {},
      '--class free: unknown field "bust" (did you mean burst?)',
    );
    refused(
      ["--limit", "1"],
      { RATEGUARD_CLASS: "free=10/s,burts=2" },
      /^RATEGUARD_CLASS free: unknown field "burts" \(did you mean burst\?\)$/,
    );
    // The old comma between classes is told how to move.
    refused(
      ["--limit", "1", "--class", "free=10/s,pro=100/s"],
      {},
      /^--class free: unknown field "pro" .*separated by ";"/,
    );
  });

  it("refuses a field given twice", () => {
    refused(
      ["--limit", "1", "--class", "free=10/s,burst=20,burst=30"],
      {},
      "--class free: burst is given twice",
    );
  });

  it("reads several classes in one text, separated by ;", () => {
    const c = run(["--limit", "1"], { RATEGUARD_CLASS: "free=10/s,burst=20; pro=100/s" });
    assert.deepEqual(c.classes.map(([n, l]) => [n, String(l)]), [
      ["free", "10/s burst 20"],
      ["pro", "100/s"],
    ]);
  });
});

describe("sidecar flags: a flag given twice, and switches turned off", () => {
  it("refuses a single-valued flag given twice, naming it", () => {
    refused(["--limit", "1", "--limit", "2"], {}, /^--limit is given twice\b/);
    refused(
      ["--limit=1", "--http", "127.0.0.1:0", "--http=127.0.0.1:1"],
      {},
      /^--http is given twice/,
    );
    refused(["--limit", "1", "--dry-run", "--dry-run"], {}, /^--dry-run is given twice/);
    refused(["--limit", "1", "--dry-run", "--no-dry-run"], {}, /--dry-run and --no-dry-run/);
    // --class is the one flag meant to be repeated.
    assert.equal(run(["--limit", "1", "--class", "a=1", "--class", "b=2"]).classes.length, 2);
  });

  it("turns off, with --no-<switch>, a switch the file or the environment sets", () => {
    const env = { RATEGUARD_DRY_RUN: "true", RATEGUARD_SHARED_BURST: "1" };
    const off = run(["--limit", "1", "--no-dry-run", "--no-shared-burst"], env);
    assert.deepEqual([off.dryRun, off.sharedBurst], [false, false]);
    const file = { limit: "1", "dry-run": true, "fleet-rules": true };
    const fromFile = run(["--config", "rg.json", "--no-dry-run", "--no-fleet-rules"], {}, file);
    assert.deepEqual([fromFile.dryRun, fromFile.fleetRules], [false, false]);
    assert.equal(run(["--limit", "1", "--dry-run"], { RATEGUARD_DRY_RUN: "false" }).dryRun, true);
  });

  it("documents each --no- form in --help", () => {
    for (const flag of ["dry-run", "fleet-rules", "shared-burst"]) {
      assert.match(HELP, new RegExp(`--no-${flag}\\b`), flag);
    }
  });
});

describe("sidecar process: typos exit 2 with one line", () => {
  const exits2 = async (args: string[], env: Record<string, string>, line: string) => {
    const p = start("cli.ts", ["--http", "127.0.0.1:0", ...args], { env });
    try {
      assert.equal(await p.exited(), 2, p.stderr());
      assert.equal(p.stderr(), `rateguard: ${line}\n`);
    } finally {
      p.kill();
    }
  };

  it("names a misspelt variable, a class's unknown field and a flag given twice", async () => {
    await Promise.all([
      exits2(
        ["--limit", "10/s"],
        { RATEGUARD_ADMIN_TOKEN_FLE: "/run/token" },
        "unknown environment variable RATEGUARD_ADMIN_TOKEN_FLE (did you mean RATEGUARD_ADMIN_TOKEN_FILE?)",
      ),
      exits2(
        ["--limit", "10/s", "--class", "free=10/s,bust=20"],
        {},
        '--class free: unknown field "bust" (did you mean burst?)',
      ),
      exits2(
        ["--limit", "10/s", "--limit", "20/s"],
        {},
        '--limit is given twice ("10/s", then "20/s"): give it once',
      ),
    ]);
  });

  it("is not stopped by the variables the test tooling sets", async () => {
    // A bad limit stops it after the environment was read: the message is the limit's.
    const p = start("cli.ts", ["--limit", "1000/fortnight"], {
      env: { RATEGUARD_PG_URL: "postgres://x", RATEGUARD_BROWSER_REQUIRED: "1" },
    });
    try {
      assert.equal(await p.exited(), 2);
      assert.match(p.stderr(), /^rateguard: --limit: .*fortnight/);
    } finally {
      p.kill();
    }
  });
});

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.js";
import { loadConfig } from "../src/io/config.js";
import { renderStarterConfig } from "../src/io/config-template.js";
import type { Config } from "../src/io/config-types.js";
import {
  BAD_BRANCH_PREFIXES,
  BAD_PORT_BANDS,
  branchPrefixConfig,
  INVALID_CONFIGS as INVALID,
  portBandConfig,
  VALID_CONFIGS as VALID,
} from "./fixtures/configs.js";

const DEFAULTS: Omit<Config, "file"> = {
  repository: { trunk: null, branch_prefix: "berth/" },
  worktree: {
    root: "",
    env_files: [".env", ".env.local"],
    inherit_env: [],
    port_base: 41000,
    port_span: 2000,
    setup: { steps: [], ensure: [] },
    resources: [],
  },
  // max_parallel's default, 0, is the number of cores (spec section 3).
  gate: {
    fail_fast: true,
    timeout_s: 600,
    checks: [],
    capacity: { max_parallel: 0 },
  },
  acceptance: { batch: 1, pre_authorized: false, queue: true },
  logbook: { enabled: true },
  remote: { name: null, publish_receipts: false },
};

let repo = "";

beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "berth-config-"));
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

async function loadText(text: string): Promise<Config> {
  await writeFile(join(repo, "berth.toml"), text);
  return loadConfig(repo);
}

/** Loads `text`, expecting a ConfigError; returns it for further assertions. */
async function refusal(text: string): Promise<ConfigError> {
  const error = await loadText(text).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  const configError = error as ConfigError;
  expect(configError.file).toBe(join(repo, "berth.toml"));
  // A user-facing message: no stack frames, no valibot wording.
  expect(configError.message).not.toMatch(/\n\s+at |Invalid type|Received/);
  return configError;
}

describe("loadConfig defaults", () => {
  it("returns every default with file null when there is no berth.toml", async () => {
    expect(await loadConfig(repo)).toEqual({ file: null, ...DEFAULTS });
  });

  it("fills every default for an empty file and names the file read", async () => {
    expect(await loadText(VALID.empty)).toEqual({ file: join(repo, "berth.toml"), ...DEFAULTS });
  });

  it("gives each load its own default arrays", async () => {
    const first = await loadConfig(repo);
    first.worktree.env_files.push(".env.mutated");
    expect((await loadConfig(repo)).worktree.env_files).toEqual([".env", ".env.local"]);
  });
});

describe("loadConfig with a full file", () => {
  it("reads every key, keeps resources in file order and fills per-item defaults", async () => {
    const config = await loadText(VALID["every key"]);
    expect(config).toEqual({
      file: join(repo, "berth.toml"),
      repository: { trunk: "develop", branch_prefix: "agents/work/" },
      worktree: {
        root: "../wt",
        env_files: [".env"],
        inherit_env: ["API_KEY", "_TOKEN2"],
        port_base: 50000,
        port_span: 100,
        setup: { steps: ["npm ci"], ensure: ["npm run migrate"] },
        resources: [
          {
            name: "zeta",
            create: 'createdb "$BERTH_DB"',
            destroy: 'dropdb --if-exists "$BERTH_DB"',
            ensure: "",
            required: true,
            gc: true,
          },
          {
            name: "alpha-1",
            create: "mk",
            destroy: "rm",
            ensure: "touch",
            required: false,
            gc: false,
          },
        ],
      },
      gate: {
        fail_fast: false,
        timeout_s: 90,
        checks: [
          { name: "typecheck", run: "npm run typecheck", after: [], timeout_s: null },
          { name: "test", run: "npm test", after: ["typecheck"], timeout_s: 1200 },
        ],
        capacity: { max_parallel: 2 },
      },
      acceptance: { batch: 5, pre_authorized: true, queue: false },
      logbook: { enabled: false },
      remote: { name: "origin", publish_receipts: true },
    });
  });

  it("accepts checks written as an array of tables", async () => {
    const config = await loadText(VALID["checks as an array of tables"]);
    expect(config.gate.checks).toEqual([
      { name: "lint", run: "npm run lint", after: [], timeout_s: null },
    ]);
  });

  it("accepts a port band that ends exactly at 65536", async () => {
    const config = await loadText(VALID["a port band that ends exactly at 65536"]);
    expect(config.worktree).toMatchObject({ port_base: 65000, port_span: 536 });
  });
});

describe("loadConfig refusals", () => {
  it("refuses a remote name git would not accept, naming remote.name", async () => {
    const error = await refusal('[remote]\nname = "a b"\n');
    expect(error.keyPath).toBe("remote.name");
    expect(error.message).toContain("a git remote name");
  });

  it("refuses a trunk written as a full ref, which would name refs/heads/refs/heads/main", async () => {
    const error = await refusal('[repository]\ntrunk = "refs/heads/main"\n');
    expect(error.keyPath).toBe("repository.trunk");
    expect(error.message).toContain('starts with "refs/"');
  });

  it("refuses an env file that leaves the checkout, naming worktree.env_files[i] and what is expected", async () => {
    const up = await refusal(INVALID["an env file outside the checkout"]);
    expect(up.code).toBe("config_invalid");
    expect(up.keyPath).toBe("worktree.env_files[1]");
    expect(up.message).toContain("worktree.env_files[1]");
    expect(up.message).toContain("expected a file path inside the repository");
    expect(up.message).toContain('found the string "../../repo/.env"');
    const through = await refusal(INVALID["an env file leaving through a subfolder"]);
    expect(through.keyPath).toBe("worktree.env_files[0]");
    expect(through.message).toContain('it has a ".." component');
    const absolute = await refusal(INVALID["an absolute env file"]);
    expect(absolute.keyPath).toBe("worktree.env_files[0]");
    expect(absolute.message).toContain("it is an absolute path");
  });

  it("accepts env files in subfolders of the checkout", async () => {
    const config = await loadText(VALID["env files in subfolders"]);
    expect(config.worktree.env_files).toEqual(["config/.env", "./web/.env.local", "a..b/.env"]);
  });

  it("refuses a string port_span, naming the key path and what was found", async () => {
    const error = await refusal(INVALID["port_span is a string"]);
    expect(error.keyPath).toBe("worktree.port_span");
    expect(error.message).toContain("worktree.port_span");
    expect(error.message).toContain('expected an integer of at least 1, found the string "x"');
    expect(error.code).toBe("config_invalid");
  });

  it("refuses a float where an integer is expected", async () => {
    const error = await refusal(INVALID["port_span is a float"]);
    expect(error.keyPath).toBe("worktree.port_span");
    expect(error.message).toContain("found the float 2000");
  });

  it("refuses an unknown top-level key", async () => {
    const error = await refusal(INVALID["an unknown top-level section"]);
    expect(error.keyPath).toBe("logbok");
    expect(error.message).toContain(
      'unknown key "logbok" (known keys: repository, worktree, gate, acceptance, logbook, remote)',
    );
  });

  it("refuses a batch of 0 and a max_parallel that is not 0 or more", async () => {
    const batch = await refusal(INVALID["a batch of 0"]);
    expect(batch.keyPath).toBe("acceptance.batch");
    const slots = await refusal(INVALID["max_parallel is a string"]);
    expect(slots.keyPath).toBe("gate.capacity.max_parallel");
    const negative = await refusal(INVALID["max_parallel is negative"]);
    expect(negative.keyPath).toBe("gate.capacity.max_parallel");
  });

  it("refuses an unknown nested key and lists the known ones", async () => {
    const error = await refusal(INVALID["an unknown key in [worktree]"]);
    expect(error.keyPath).toBe("worktree.prot_span");
    expect(error.message).toContain('unknown key "prot_span" (known keys: root, env_files,');
  });

  it("refuses an unknown key inside a resource and inside a check", async () => {
    const resource = await refusal(INVALID["an unknown key in a resource"]);
    expect(resource.keyPath).toBe("worktree.resources.db.destory");
    const check = await refusal(INVALID["an unknown key in a check"]);
    expect(check.keyPath).toBe("gate.checks[0].after_");
  });

  it("refuses a section given as a value of another type", async () => {
    const error = await refusal(INVALID["a section given as an array"]);
    expect(error.keyPath).toBe("gate");
    expect(error.message).toContain("expected a table, found an empty array");
  });

  it("refuses a wrong type inside a resource", async () => {
    const error = await refusal(INVALID["required is a string"]);
    expect(error.keyPath).toBe("worktree.resources.db.required");
    expect(error.message).toContain('expected a boolean (true or false), found the string "yes"');
  });

  it("refuses a resource without its destroy command", async () => {
    const error = await refusal(INVALID["a resource without destroy"]);
    expect(error.keyPath).toBe("worktree.resources.db.destroy");
    expect(error.message).toContain("found nothing");
  });

  it("refuses a resource name outside [a-z0-9_-]", async () => {
    const error = await refusal(INVALID["a resource name with a capital"]);
    expect(error.keyPath).toBe("worktree.resources.Db");
    expect(error.message).toContain('found the string "Db"');
  });

  it("refuses a wrong type inside gate.checks[i]", async () => {
    const error = await refusal(INVALID["a check timeout is a string"]);
    expect(error.keyPath).toBe("gate.checks[1].timeout_s");
    expect(error.message).toContain('expected a positive integer, found the string "10"');
  });

  it("refuses a wrong type inside a check's after list", async () => {
    const error = await refusal(INVALID["after holds a number"]);
    expect(error.keyPath).toBe("gate.checks[0].after[0]");
    expect(error.message).toContain("expected a check name, found the integer 1");
  });

  it("refuses an after that names no declared check", async () => {
    const error = await refusal(INVALID["after names no declared check"]);
    expect(error.keyPath).toBe("gate.checks[1].after");
    expect(error.message).toContain('found "typo" (no check has that name)');
  });

  it("refuses a check that runs after itself", async () => {
    const error = await refusal(INVALID["a check runs after itself"]);
    expect(error.keyPath).toBe("gate.checks[0].after");
    expect(error.message).toContain("cannot run after itself");
  });

  it("refuses a dependency cycle and spells it out", async () => {
    const error = await refusal(INVALID["a dependency cycle"]);
    expect(error.keyPath).toBe("gate.checks[1].after");
    expect(error.message).toContain("expected no dependency cycle, found a -> c -> b -> a");
  });

  it("refuses duplicate check names", async () => {
    const error = await refusal(INVALID["duplicate check names"]);
    expect(error.keyPath).toBe("gate.checks[1].name");
    expect(error.message).toContain('found "a" again (first at gate.checks[0])');
  });

  it.each(BAD_BRANCH_PREFIXES)("refuses the branch_prefix %j", async (prefix, why) => {
    const error = await refusal(branchPrefixConfig(prefix));
    expect(error.keyPath).toBe("repository.branch_prefix");
    expect(error.message).toContain(`found the string ${JSON.stringify(prefix)}`);
    expect(error.message).toContain(why);
  });

  it.each(BAD_PORT_BANDS)("refuses the port band %j", async (lines, keyPath, fragment) => {
    const error = await refusal(portBandConfig(lines));
    expect(error.keyPath).toBe(keyPath);
    expect(error.message).toContain(fragment);
  });

  it("refuses a zero gate timeout", async () => {
    const error = await refusal(INVALID["a zero gate timeout"]);
    expect(error.keyPath).toBe("gate.timeout_s");
    expect(error.message).toContain("expected a positive integer, found the integer 0");
  });

  it("refuses invalid TOML with the parser's line and column", async () => {
    const error = await refusal(INVALID["invalid TOML"]);
    expect(error.keyPath).toBeUndefined();
    expect(error.message).toContain("invalid TOML at line 3, column");
    // The way out ends the sentence; the lines around the fault follow it, as the parser shows them.
    const [sentence, excerpt] = error.message.split("\n\n");
    expect(sentence).toMatch(/\(edit the file, then run berth again\)$/);
    expect(excerpt).toMatch(/^\d+: /);
    expect(error.message.endsWith("\n")).toBe(false);
  });

  it("refuses a berth.toml that is not UTF-8, rather than read its value altered", async () => {
    await writeFile(
      join(repo, "berth.toml"),
      Buffer.concat([
        Buffer.from('[repository]\ntrunk = "ma'),
        Buffer.from([0xff]),
        Buffer.from('in"\n'),
      ]),
    );
    const error = await loadConfig(repo).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("not UTF-8 text, as TOML must be");
    // Valid UTF-8, U+FFFD itself included, reads as written.
    await writeFile(join(repo, "berth.toml"), '[repository]\ntrunk = "ma\uFFFDin"\n');
    expect((await loadConfig(repo)).repository.trunk).toBe("ma\uFFFDin");
  });

  it("refuses an unreadable berth.toml", async () => {
    await mkdir(join(repo, "berth.toml"));
    const error = await loadConfig(repo).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("cannot read the file (EISDIR)");
  });
});

describe("renderStarterConfig", () => {
  it("loads back to exactly the defaults with the given trunk", async () => {
    const config = await loadText(renderStarterConfig("trunk/v2"));
    expect(config).toEqual({
      file: join(repo, "berth.toml"),
      ...DEFAULTS,
      repository: { ...DEFAULTS.repository, trunk: "trunk/v2" },
    });
  });

  it("shows resources and gate checks as comments", () => {
    const text = renderStarterConfig("main");
    expect(text).toContain('trunk = "main"');
    expect(text).toContain("# [worktree.resources.db]");
    expect(text).toMatch(/^ {2}# \{ name = "test", run = "npm test", after = \["typecheck"\]/m);
  });

  it("keeps lines within 100 columns", () => {
    for (const line of renderStarterConfig("main").split("\n")) {
      expect(line.length).toBeLessThanOrEqual(100);
    }
  });
});

describe("[acceptance]", () => {
  it("reads pre_authorized, default false, and refuses a non-boolean", async () => {
    await writeFile(join(repo, "berth.toml"), "[acceptance]\npre_authorized = true\n");
    expect((await loadConfig(repo)).acceptance).toEqual({
      batch: 1,
      pre_authorized: true,
      queue: true,
    });
    await writeFile(join(repo, "berth.toml"), '[acceptance]\npre_authorized = "yes"\n');
    const error = await loadConfig(repo).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).keyPath).toBe("acceptance.pre_authorized");
  });

  it("reads queue (spec section 3), default true, and refuses a non-boolean", async () => {
    await writeFile(join(repo, "berth.toml"), "[acceptance]\nqueue = false\n");
    expect((await loadConfig(repo)).acceptance.queue).toBe(false);
    await writeFile(join(repo, "berth.toml"), "[acceptance]\nqueue = 1\n");
    const error = await loadConfig(repo).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).keyPath).toBe("acceptance.queue");
  });
});

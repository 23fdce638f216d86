import { describe, expect, it } from "vitest";
import { plainStatusOptions } from "../src/cli-status.js";
import { buildProgram, type VerbExecutor } from "../src/program.js";

/**
 * A plain `berth status` runs without the parser (cli-status.ts). These
 * checks prove that the two roads agree: every command line the plain road
 * takes gets exactly the options the parser would give the verb, and every
 * one it leaves to the parser is one it could not answer alike.
 */

/** The verb and options the parser hands the executor for `args`. */
async function parsed(args: string[]): Promise<{ verb: string; options: Record<string, unknown> }> {
  let seen: { verb: string; options: Record<string, unknown> } | undefined;
  const capture: VerbExecutor = async (verb, options) => {
    seen = { verb, options: { ...options } };
    throw new Error("captured");
  };
  const program = buildProgram(capture, (code) => {
    throw new Error(`exit ${code}`);
  });
  await program.parseAsync(["node", "berth", ...args]).catch((error: Error) => {
    if (error.message !== "captured") throw error;
  });
  if (seen === undefined) throw new Error(`the parser ran no verb for ${args.join(" ")}`);
  return seen;
}

const FLAGS = ["--json", "--debug", "--local", "--all"];

describe("a plain status (cli-status.ts)", () => {
  // Every verb word with every subset of the flags, in two orders, one flag repeated.
  const lines: string[][] = [];
  for (const word of ["status", "ls", "list"]) {
    for (let mask = 0; mask < 1 << FLAGS.length; mask++) {
      const flags = FLAGS.filter((_, i) => mask & (1 << i));
      lines.push([word, ...flags], [word, ...[...flags].reverse()]);
    }
    lines.push([word, "--json", "--json"]);
  }

  it(`gives each of ${lines.length} command lines the options the parser gives`, async () => {
    for (const line of lines) {
      const expected = await parsed(line);
      expect(expected.verb, line.join(" ")).toBe("status");
      expect(plainStatusOptions(line), line.join(" ")).toEqual(expected.options);
    }
  });

  it("leaves everything else to the parser", () => {
    for (const line of [
      [],
      ["--json"],
      ["status", "--remote"],
      ["status", "--help"],
      ["status", "-h"],
      ["status", "--json=true"],
      ["status", "extra"],
      ["status", "--bogus"],
      ["stauts"],
      ["help", "status"],
      ["start", "--json"],
      ["status", "toString"],
      ["status", "__proto__"],
    ]) {
      expect(plainStatusOptions(line), line.join(" ")).toBeNull();
    }
  });
});

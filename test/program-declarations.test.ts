import type { Command } from "@commander-js/extra-typings";
import { describe, expect, it } from "vitest";
import { buildProgram, invokedVerb, type VerbExecutor } from "../src/program.js";

/**
 * cli-run.ts declares only the invoked verb when the first word names one
 * (start-up cost, docs/performance.md). These checks prove that the verb
 * then reads exactly as in the whole program: same help for it and each of
 * its subcommands, and that every verb of the whole program is found.
 */
const never: VerbExecutor = () => {
  throw new Error("declared to be read, not run");
};

function helpTexts(cmd: Command, path: string[] = []): Map<string, string> {
  // outputHelp, not helpInformation: it includes the examples added after it.
  let text = "";
  cmd.configureOutput({ writeOut: (chunk) => (text += chunk) });
  cmd.outputHelp();
  const texts = new Map([[path.join(" "), text]]);
  for (const sub of cmd.commands) {
    for (const [key, text] of helpTexts(sub as unknown as Command, [...path, sub.name()])) {
      texts.set(key, text);
    }
  }
  return texts;
}

describe("declaring only the invoked verb", () => {
  const whole = buildProgram(never);
  const verbs = whole.commands.map((c) => c.name()).filter((name) => name !== "completion");

  it("finds every top-level verb and alias, and nothing that is not one", () => {
    for (const cmd of whole.commands) {
      for (const name of [cmd.name(), ...cmd.aliases()]) {
        expect(invokedVerb([name, "--json"])).toBe(
          cmd.name() === "completion" ? undefined : cmd.name(),
        );
      }
    }
    expect(invokedVerb([])).toBeUndefined();
    expect(invokedVerb(["--help"])).toBeUndefined();
    expect(invokedVerb(["help", "status"])).toBeUndefined();
    expect(invokedVerb(["stauts"])).toBeUndefined();
  });

  it.each(verbs)(
    "berth %s reads the same, with its subcommands, as in the whole program",
    (verb) => {
      const alone = buildProgram(never, undefined, verb);
      expect(alone.commands.map((c) => c.name())).toContain(verb);
      expect(alone.commands.length).toBeLessThan(whole.commands.length);
      const expected = helpTexts(
        whole.commands.find((c) => c.name() === verb) as unknown as Command,
      );
      const actual = helpTexts(alone.commands.find((c) => c.name() === verb) as unknown as Command);
      expect([...actual]).toEqual([...expected]);
      if (verb === "status") expect(actual.get("")).toContain("$ berth ls --all");
    },
  );
});

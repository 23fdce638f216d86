import { describe, expect, it } from "vitest";
import {
  applyManagedValues,
  BLOCK_BEGIN,
  BLOCK_END,
  inheritValues,
  parseAssignments,
} from "../src/core/berth/env-files.js";

describe("dotenv parsing", () => {
  it("reads assignments, export prefixes and quoted values spanning lines, skipping comments", () => {
    const text = [
      "# PORT=1",
      "PORT=3000",
      "export API_KEY = 'abc'",
      'CERT="-----BEGIN',
      "line two",
      '-----END"',
      "EMPTY=",
    ].join("\n");
    expect(parseAssignments(text.split("\n"))).toEqual([
      { key: "PORT", raw: "3000", first: 1, last: 1 },
      { key: "API_KEY", raw: "'abc'", first: 2, last: 2 },
      { key: "CERT", raw: '"-----BEGIN\nline two\n-----END"', first: 3, last: 5 },
      { key: "EMPTY", raw: "", first: 6, last: 6 },
    ]);
  });

  it("inherits only the wanted keys, a later file overriding an earlier one, values verbatim", () => {
    const values = inheritValues(
      ['API_KEY="from .env"\nSECRET=x\nURL=http://a', "API_KEY=from-local"],
      ["API_KEY", "URL", "ABSENT"],
    );
    expect([...values]).toEqual([
      ["API_KEY", "from-local"],
      ["URL", "http://a"],
    ]);
  });
});

describe("writing berth's values", () => {
  const values = new Map([
    ["BERTH_PORT", "41234"],
    ["API_KEY", '"s3cret"'],
  ]);

  it("creates a block in an empty file", () => {
    expect(applyManagedValues("", values)).toBe(
      `${BLOCK_BEGIN}\nBERTH_PORT=41234\nAPI_KEY="s3cret"\n${BLOCK_END}\n`,
    );
  });

  it("rewrites an assignment the file already has in place and keeps everything else", () => {
    const text = "# my settings\nexport API_KEY = old\nDEBUG=1\n";
    expect(applyManagedValues(text, values)).toBe(
      `# my settings\nexport API_KEY = "s3cret"\nDEBUG=1\n\n${BLOCK_BEGIN}\nBERTH_PORT=41234\n${BLOCK_END}\n`,
    );
  });

  it("replaces its own block on a second write instead of adding another", () => {
    const once = applyManagedValues("DEBUG=1\n", values);
    const twice = applyManagedValues(once, new Map([["BERTH_PORT", "41999"]]));
    expect(twice).toBe(`DEBUG=1\n\n${BLOCK_BEGIN}\nBERTH_PORT=41999\n${BLOCK_END}\n`);
  });
});

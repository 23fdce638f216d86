import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/repo.js";

/**
 * The benchmark's scripts import berth's built modules by path (bench/*.mjs,
 * from dist/). Nothing else runs them before a whole `npm run bench`, so a
 * module moved or a name renamed in src/ would break the benchmark unseen:
 * every such import is checked here against the source it is built from.
 */
const IMPORT = /const \{([^}]+)\} = await import\(new URL\("([^"]+)\.js", dist\)\.href\);/g;

describe("the benchmark's imports of berth (bench/*.mjs)", () => {
  const bench = join(PROJECT_ROOT, "bench");
  const imports = readdirSync(bench)
    .filter((name) => name.endsWith(".mjs"))
    .flatMap((name) =>
      [...readFileSync(join(bench, name), "utf8").matchAll(IMPORT)].map((match) => ({
        script: name,
        module: match[2] as string,
        names: (match[1] as string).split(",").map((part) => part.trim().split(":")[0]?.trim()),
      })),
    );

  it("finds them", () => {
    expect(imports.map((i) => i.module)).toContain("core/fleet/survey");
  });

  it("names modules and exports that src/ has", async () => {
    for (const { script, module, names } of imports) {
      const exported = await import(join(PROJECT_ROOT, "src", `${module}.ts`));
      for (const name of names)
        expect(exported, `${script}: ${name} from ${module}`).toHaveProperty(name as string);
    }
  });
});

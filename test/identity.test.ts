import { describe, expect, it } from "vitest";
import { dbNameFor, fnv1a32, mintId, portFor, slugify } from "../src/core/berth/identity.js";

describe("port formula (frozen: spec section 7)", () => {
  // Fixtures pin FNV-1a 32-bit and the band arithmetic; changing either moves every berth's port.
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ])("fnv1a32(%j) = %i", (text, hash) => {
    expect(fnv1a32(text)).toBe(hash);
  });

  it.each([
    ["feat-ce17fa", 42085],
    ["fix-upload-retry-399a53", 41722],
    ["a", 41000 + (0xe40c292c % 2000)],
  ])("portFor(%j) with the default band = %i", (id, port) => {
    expect(portFor(id, 41000, 2000)).toBe(port);
  });

  it("stays inside the band", () => {
    for (const id of ["x", "yy", "zzz-123456", "long-name-abcdef"]) {
      const port = portFor(id, 5000, 7);
      expect(port).toBeGreaterThanOrEqual(5000);
      expect(port).toBeLessThan(5007);
    }
  });
});

describe("ids", () => {
  const hex = () => "abcdef";

  it("normalises a name and reports the change", () => {
    const minted = mintId("Fix: upload/retry!!", hex);
    expect(minted.id).toBe("fix-upload-retry-abcdef");
    expect(minted.nameNote).toContain("fix-upload-retry");
  });

  it("keeps a clean name without a note", () => {
    expect(mintId("feat", hex)).toEqual({ id: "feat-abcdef", nameNote: null });
  });

  it("cuts long names at a word boundary within 40 characters", () => {
    const slug = slugify("implement the very long feature name that keeps going and going");
    expect(slug.length).toBeLessThanOrEqual(40);
    expect(slug).toBe("implement-the-very-long-feature-name");
  });

  it("folds accents before dropping other characters (issue 15: café became caf)", () => {
    expect(slugify("café 修正")).toBe("cafe");
    expect(slugify("Ünïcödé Naïve façade")).toBe("unicode-naive-facade");
    // NFKD also unfolds compatibility forms: the "ﬁ" ligature, full-width digits.
    expect(slugify("ﬁx １２")).toBe("fix-12");
    expect(mintId("café", hex)).toEqual({ id: "cafe-abcdef", nameNote: expect.any(String) });
  });

  it("hard-cuts a single long word", () => {
    expect(slugify("x".repeat(60))).toBe("x".repeat(40));
  });

  it("invents adjective-noun-hex when no usable name is given", () => {
    expect(mintId(undefined, hex).id).toMatch(/^[a-z]+-[a-z]+-abcdef$/);
    expect(mintId("!!!", hex).id).toMatch(/^[a-z]+-[a-z]+-abcdef$/);
  });

  it("derives database names", () => {
    expect(dbNameFor("fix-upload-abc123")).toBe("fix_upload_abc123");
  });
});

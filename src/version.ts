/** Kept equal to package.json's version by test/version.test.ts (no JSON read at start-up). */
export const VERSION = "0.1.0";

import { defineModelSuite } from "./model/suite.js";

// Half of the randomized suite; model-1.test.ts runs the other half beside it.
defineModelSuite("test/reliability/model-2.test.ts", 1, 2);

import { defineModelSuite } from "./model/suite.js";

// Half of the randomized suite; model-2.test.ts runs the other half beside it.
defineModelSuite("test/reliability/model-1.test.ts", 0, 2);

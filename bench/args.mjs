// The benchmarks' one reader of their command line: `--name value` options and
// `--name` switches, each declared by the script. `--help` prints the script's
// usage; anything undeclared (a typo, a value with no option, a stray word) is
// refused with exit 2 before any work starts. A run takes minutes, and a whole
// run of bench/run.mjs writes the committed figures: `--hlep` must not be one.

/**
 * @param {string[]} argv the arguments after the script's name
 * @param {{ usage: string, options?: string[], switches?: string[], positionals?: number }} spec
 */
export function readArgs(argv, { usage, options = [], switches = [], positionals = 0 }) {
  const values = new Map();
  const on = new Set();
  const words = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    if (!arg.startsWith("-")) {
      words.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (switches.includes(name)) {
      on.add(name);
    } else if (options.includes(name)) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) refuse(usage, `${arg} needs a value`);
      values.set(name, value);
      i++;
    } else {
      refuse(usage, `unknown option ${arg}`);
    }
  }
  if (words.length > positionals) refuse(usage, `unexpected argument ${words[positionals]}`);
  return {
    /** The option's text, or `fallback` when it was not given. */
    text: (name, fallback) => values.get(name) ?? fallback,
    /** The option as a number of at least `min` (whole unless `fraction`), or `fallback`. */
    number: (name, fallback, { min = 1, fraction = false } = {}) => {
      const given = values.get(name);
      if (given === undefined) return fallback;
      const value = Number(given);
      const whole = fraction || Number.isInteger(value);
      if (given.trim() === "" || !Number.isFinite(value) || !whole || value < min) {
        refuse(
          usage,
          `--${name} must be ${fraction ? "a number" : "a whole number"} from ${min}, not ${given}`,
        );
      }
      return value;
    },
    has: (name) => on.has(name),
    positionals: words,
    refuse: (why) => refuse(usage, why),
  };
}

function refuse(usage, why) {
  process.stderr.write(`${why}; nothing was run.\n\n${usage}\n`);
  process.exit(2);
}

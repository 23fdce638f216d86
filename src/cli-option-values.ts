import { type CommandUnknownOpts, InvalidArgumentError } from "@commander-js/extra-typings";

/**
 * commander gives an option that needs a value whatever word follows it, one
 * of the verb's own options included: `berth await --green --json` awaited a
 * branch named "--json", and `berth await --green --timeout 30` failed as
 * "too many arguments". Such a value is refused as a usage error that names
 * the option left without its value. (No branch, tag, id or path berth takes
 * is spelled like one of its options.)
 */
export function refuseOptionsAsValues(command: CommandUnknownOpts): void {
  const flags = new Set(["-h", "--help"]);
  for (const option of command.options) {
    if (option.long !== undefined) flags.add(option.long);
    if (option.short !== undefined) flags.add(option.short);
  }
  for (const option of command.options) {
    if (!option.required || option.variadic) continue;
    const own = option.parseArg;
    const name = option.long ?? option.short ?? option.flags;
    option.argParser((value: string, previous: unknown) => {
      if (flags.has(value)) {
        throw new InvalidArgumentError(`${name} needs a value of its own before ${value}.`);
      }
      return own === undefined ? value : own(value, previous);
    });
  }
  for (const sub of command.commands) refuseOptionsAsValues(sub);
}

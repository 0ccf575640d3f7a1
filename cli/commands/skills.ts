import { noMoreArguments, subcommandError, UsageError } from "../command-line.js";
import { declareCommand, type FlagOption, type StoreOptions } from "./declaration.js";
import { DATA } from "./options.js";

const REPLACE: FlagOption = {
  name: "replace",
  type: "boolean",
  flag: "--replace",
  about: "skills add: replace an installed skill of the same name.",
};

type SkillsCommand =
  | { name: "skills-list"; store: StoreOptions }
  | { name: "skills-add"; store: StoreOptions; folder: string; replace: boolean }
  | { name: "skills-remove"; store: StoreOptions; skill: string };

/** `skills list | add <folder> | remove <name>`: the installed skills (`cli/skills.ts`). */
export const skills = declareCommand<SkillsCommand>({
  name: "skills",
  forms: [
    {
      usage: "skills list",
      about: ["List the installed skills (agents get them through context.skills)."],
    },
    {
      usage: "skills add <folder>",
      about: [
        "Install a skill folder (SKILL.md with name/description front matter);",
        "--replace replaces an installed skill of the same name.",
      ],
    },
    { usage: "skills remove <name>", about: ["Remove an installed skill."] },
  ],
  options: [DATA, { option: REPLACE, only: ["add"] }],
  examples: ["skills add ./my-skills/house-style"],
  parse: ({ args: [sub, ...more], store, flag }) => {
    if (sub === "list") {
      noMoreArguments("skills list", more);
      return { name: "skills-list", store };
    }
    if (sub === "add" || sub === "remove") {
      const [argument, ...extra] = more;
      const what = sub === "add" ? "<folder>" : "<name>";
      if (argument === undefined) {
        throw new UsageError(`"skills ${sub}" needs a ${what.slice(1, -1)}`);
      }
      noMoreArguments(`skills ${sub} ${what}`, extra);
      return sub === "add"
        ? { name: "skills-add", store, folder: argument, replace: flag(REPLACE) }
        : { name: "skills-remove", store, skill: argument };
    }
    throw subcommandError("skills", sub, "list, add <folder> or remove <name>");
  },
  action: {
    needs: "runtime",
    run: async ({ runtime, io }, command) => {
      const { addSkill, listSkills, removeSkill } = await import("../skills.js");
      if (command.name === "skills-list") return listSkills(runtime, io);
      return command.name === "skills-add"
        ? addSkill(runtime, io, command.folder, command.replace)
        : removeSkill(runtime, io, command.skill);
    },
  },
});

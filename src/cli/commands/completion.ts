// `pcsync completion bash|zsh|fish`: print a shell completion script for every command and option.

import { Argument } from "commander";
import { FAMILY_NAMES } from "../../families.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { describeProgram, renderCompletion, SHELLS, type Shell } from "../completion-scripts.js";

export const registerCompletionCommand: CommandRegistrar = (io, _setExit, program) =>
  newCommand(
    "completion",
    "Print a shell completion script (bash, zsh or fish).",
    `
Examples:
  $ source <(pcsync completion bash)                    # in ~/.bashrc
  $ source <(pcsync completion zsh)                     # in ~/.zshrc, after compinit
  $ pcsync completion fish > ~/.config/fish/completions/pcsync.fish`,
  )
    .addArgument(new Argument("<shell>", "the shell to complete in").choices(SHELLS))
    .action((shell: Shell) => {
      // Read at run time, once every command has been registered.
      const tree = describeProgram(program, { "--family": FAMILY_NAMES });
      io.stdout.write(renderCompletion(tree, shell));
    });

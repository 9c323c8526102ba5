// `pcsync completion bash|zsh|fish`: print a shell completion script for every command and option.

import { Argument, Command } from "commander";
import { FAMILY_NAMES } from "../../families.js";
import type { CommandRegistrar } from "../command-registrar.js";
import { describeProgram, renderCompletion, SHELLS, type Shell } from "../completion-scripts.js";

export const registerCompletionCommand: CommandRegistrar = (program, io) => {
  const command = new Command("completion")
    .description("Print a shell completion script (bash, zsh or fish).")
    .addArgument(new Argument("<shell>", "the shell to complete in").choices(SHELLS));
  command.addHelpText(
    "after",
    `
Examples:
  $ source <(pcsync completion bash)                    # in ~/.bashrc
  $ source <(pcsync completion zsh)                     # in ~/.zshrc, after compinit
  $ pcsync completion fish > ~/.config/fish/completions/pcsync.fish`,
  );
  command.action((shell: Shell) => {
    // Read at run time, once every command has been registered.
    const tree = describeProgram(program, { "--family": FAMILY_NAMES });
    io.stdout.write(renderCompletion(tree, shell));
  });
  program.addCommand(command);
};

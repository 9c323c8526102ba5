// `pcsync completion bash|zsh|fish`: print a shell completion script for every command and option,
// generated from the commander program itself so that none is left out of a hand-kept list.

import { Argument, type Command, type Option } from "commander";
import { PROFILE_NAMES } from "../../emulator/types.js";
import { type CommandRegistrar, newCommand } from "../command.js";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

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
      // Read at run time, once every command has been registered. --family has its choices already.
      const tree = describeProgram(program, { "--profile": PROFILE_NAMES });
      io.stdout.write(renderCompletion(tree, shell));
    });

export interface CompletionOption {
  /** Short first. */
  flags: string[];
  description: string;
  takesValue: boolean;
  valueName: string;
  choices: string[];
  files: boolean;
  /** zsh offers it again. */
  repeatable: boolean;
}

export interface CompletionCommand {
  name: string;
  description: string;
  options: CompletionOption[];
  /** The first positional argument's, when it has a fixed set. */
  argumentChoices: string[];
}

export interface CompletionTree {
  name: string;
  options: CompletionOption[];
  commands: CompletionCommand[];
}

// Tokens are written into scripts unquoted in places (bash `compgen -W`): anything else is left out
// rather than risk a script that breaks or runs something.
const SAFE_TOKEN = /^[\w.:@%+,/=-]+$/;
const FILE_VALUE = /(file|path|dir|directory)$/i;

/** `valueChoices`, by long flag: the known set of an option that takes a free value. */
export function describeProgram(
  program: Command,
  valueChoices: Readonly<Record<string, readonly string[]>> = {},
): CompletionTree {
  const help = program.createHelp();
  const readOptions = (command: Command) =>
    help.visibleOptions(command).map((option) => describeOption(option, valueChoices));
  const commands = help.visibleCommands(program).map((command) => {
    const [firstArgument] = command.registeredArguments;
    // `help [command]` is commander's own; offer the command names for it.
    const argumentChoices =
      command.name() === "help" && firstArgument?.argChoices === undefined
        ? program.commands.map((sub) => sub.name())
        : (firstArgument?.argChoices ?? []);
    return {
      name: command.name(),
      description: firstLine(command.summary() || command.description()),
      options: readOptions(command),
      argumentChoices: argumentChoices.filter((choice) => SAFE_TOKEN.test(choice)),
    };
  });
  return {
    name: program.name(),
    options: readOptions(program),
    commands: commands.filter((command) => SAFE_TOKEN.test(command.name)),
  };
}

function describeOption(
  option: Option,
  valueChoices: Readonly<Record<string, readonly string[]>>,
): CompletionOption {
  const flags = [option.short, option.long].filter(
    (flag): flag is string => flag !== undefined && SAFE_TOKEN.test(flag),
  );
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1]?.replace(/\.\.\.$/, "") ?? "";
  const takesValue = option.required || option.optional;
  const choices =
    option.argChoices ?? (option.long === undefined ? undefined : valueChoices[option.long]) ?? [];
  return {
    flags,
    description: firstLine(option.description),
    takesValue,
    valueName: valueName.replace(/[^\w|=-]/g, "") || "value",
    choices: takesValue ? choices.filter((choice) => SAFE_TOKEN.test(choice)) : [],
    files: takesValue && FILE_VALUE.test(valueName),
    // Commander has no notion of "repeatable" for collecting parsers; help texts say it.
    repeatable: option.variadic || /repeatable/i.test(option.description),
  };
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").trim().replace(/\.$/, "");
}

export function renderCompletion(tree: CompletionTree, shell: Shell): string {
  const renderers = { bash: renderBash, zsh: renderZsh, fish: renderFish } satisfies Record<Shell, unknown>;
  return renderers[shell](tree);
}

function renderBash(tree: CompletionTree): string {
  const fn = `_${tree.name.replace(/\W/g, "_")}_completion`;
  const filesFn = `_${tree.name.replace(/\W/g, "_")}_files`;
  const rootWords = [
    ...tree.commands.map((command) => command.name),
    ...tree.options.flatMap((o) => o.flags),
  ];
  const cases = tree.commands.map((command) => {
    const flagsOf = (options: CompletionOption[]) => options.flatMap((option) => option.flags).join("|");
    const valued = command.options.filter((option) => option.takesValue);
    const files = valued.filter((option) => option.files && option.choices.length === 0);
    const free = valued.filter((option) => !option.files && option.choices.length === 0);
    const valueCases = valued
      .filter((option) => option.choices.length > 0)
      .map(
        (option) =>
          `        ${option.flags.join("|")}) COMPREPLY=($(compgen -W "${option.choices.join(" ")}" -- "$cur")); return ;;`,
      );
    if (files.length > 0) valueCases.push(`        ${flagsOf(files)}) ${filesFn}; return ;;`);
    // A free value (an id, a name) has nothing to offer; options would be wrong there.
    if (free.length > 0) valueCases.push(`        ${flagsOf(free)}) COMPREPLY=(); return ;;`);
    const words = [...command.options.flatMap((option) => option.flags), ...command.argumentChoices];
    return [
      `    ${command.name})`,
      ...(valueCases.length > 0 ? ['      case "$prev" in', ...valueCases, "      esac"] : []),
      `      words="${words.join(" ")}" ;;`,
    ].join("\n");
  });
  return `# bash completion for ${tree.name}; generated by \`${tree.name} completion bash\`.
# Load it with: source <(${tree.name} completion bash)   (or save it in your bash-completion directory)

${filesFn}() {
  local IFS=$'\\n'
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen -f -- "$cur"))
}

${fn}() {
  local cur prev command words i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  if (( COMP_CWORD > 0 )); then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  # --option=value: bash splits at "=", so the option is one word further back.
  if [[ "$prev" == "=" && COMP_CWORD -gt 1 ]]; then prev="\${COMP_WORDS[COMP_CWORD-2]}"; fi
  if [[ "$cur" == "=" ]]; then cur=""; fi
  command=""
  # The root command takes no option values, so its first non-option word is the subcommand.
  for (( i = 1; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) command="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$command" in
    "") words="${rootWords.join(" ")}" ;;
${cases.join("\n")}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}

complete -F ${fn} ${tree.name}
`;
}

function zshQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** Text inside `[...]` of an _arguments spec, where brackets and colons are syntax. */
function zshBracketText(text: string): string {
  return text.replace(/[\\[\]:]/g, (character) => `\\${character}`);
}

function zshOptionSpec(option: CompletionOption): string {
  const action = !option.takesValue
    ? ""
    : option.choices.length > 0
      ? `:${option.valueName}:(${option.choices.join(" ")})`
      : option.files
        ? `:${option.valueName}:_files`
        : `:${option.valueName}: `;
  const body = `[${zshBracketText(option.description)}]${action}`;
  if (option.flags.length === 1) {
    return zshQuote(`${option.repeatable ? "*" : ""}${option.flags[0]}${body}`);
  }
  const prefix = option.repeatable ? "*" : `(${option.flags.join(" ")})`;
  return `${zshQuote(prefix)}{${option.flags.join(",")}}${zshQuote(body)}`;
}

function renderZsh(tree: CompletionTree): string {
  const fn = `_${tree.name.replace(/\W/g, "_")}`;
  const describe = tree.commands.map(
    (command) => `    ${zshQuote(`${command.name}:${command.description}`)}`,
  );
  const cases = tree.commands.map((command) => {
    const specs = command.options.map(zshOptionSpec);
    const value = command.name === "help" ? "command" : "value";
    if (command.argumentChoices.length > 0)
      specs.push(zshQuote(`1:${value}:(${command.argumentChoices.join(" ")})`));
    return `        ${command.name})\n          _arguments -s \\\n            ${specs.join(" \\\n            ")}\n          ;;`;
  });
  const rootSpecs = tree.options.map(zshOptionSpec);
  return `#compdef ${tree.name}
# zsh completion for ${tree.name}; generated by \`${tree.name} completion zsh\`.
# Load it with: source <(${tree.name} completion zsh)   (after compinit), or save it as _${tree.name} in $fpath

${fn}() {
  local curcontext="$curcontext" state line
  typeset -A opt_args
  local -a commands
  commands=(
${describe.join("\n")}
  )
  _arguments -C \\
    ${[...rootSpecs, "'1: :->command'", "'*:: :->args'"].join(" \\\n    ")}
  case $state in
    command)
      _describe -t commands '${tree.name} command' commands
      ;;
    args)
      case $line[1] in
${cases.join("\n")}
      esac
      ;;
  esac
}

if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${tree.name}
fi
`;
}

function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, (character) => `\\${character}`)}'`;
}

function fishOptionLine(program: string, condition: string, option: CompletionOption): string {
  const parts = [`complete -c ${program} -n ${fishQuote(condition)}`];
  for (const flag of option.flags) {
    parts.push(flag.startsWith("--") ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`);
  }
  parts.push(`-d ${fishQuote(option.description)}`);
  if (option.takesValue) {
    if (option.choices.length > 0) parts.push(`-x -a ${fishQuote(option.choices.join(" "))}`);
    else if (option.files) parts.push("-r -F");
    else parts.push("-x");
  }
  return parts.join(" ");
}

function renderFish(tree: CompletionTree): string {
  const program = tree.name;
  const lines = [
    `# fish completion for ${program}; generated by \`${program} completion fish\`.`,
    `# Load it with: ${program} completion fish | source   (or save it as ~/.config/fish/completions/${program}.fish)`,
    "",
    `complete -c ${program} -f`,
    ...tree.options.map((option) => fishOptionLine(program, "__fish_use_subcommand", option)),
  ];
  for (const command of tree.commands) {
    lines.push(
      `complete -c ${program} -n __fish_use_subcommand -a ${command.name} -d ${fishQuote(command.description)}`,
    );
  }
  for (const command of tree.commands) {
    const condition = `__fish_seen_subcommand_from ${command.name}`;
    for (const option of command.options) lines.push(fishOptionLine(program, condition, option));
    if (command.argumentChoices.length > 0) {
      lines.push(
        `complete -c ${program} -n ${fishQuote(condition)} -a ${fishQuote(command.argumentChoices.join(" "))}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

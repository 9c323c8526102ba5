// Completion scripts come from the program tree: every command and option is offered in each shell,
// and the bash script completes as a user would see it.

import { execFileSync, spawnSync } from "node:child_process";
import { PassThrough } from "node:stream";
import { Command, Option } from "commander";
import { describe, expect, it } from "vitest";
import { describeProgram, renderCompletion, SHELLS } from "../../src/cli/commands/completion.js";
import { buildProgram } from "../../src/cli/program.js";
import { SecretRegistry } from "../../src/redact.js";
import { runCliInProcess } from "../support/in-process.js";

function realProgram(): Promise<Command> {
  const io = {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    env: {},
    cwd: process.cwd(),
    secrets: new SecretRegistry(),
  };
  return buildProgram(io, () => undefined);
}

/** What bash offers for a command line whose last word is being completed. */
function completeInBash(script: string, words: string[]): string[] {
  const program = [
    script,
    'COMP_WORDS=("$@")',
    "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))",
    "_pcsync_completion",
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join("\n");
  const output = execFileSync("bash", ["-c", program, "bash", ...words], { encoding: "utf8" });
  return output.split("\n").filter((line) => line !== "");
}

/** Whether a shell is installed; zsh and fish are optional on developer machines and CI. */
function hasShell(shell: string): boolean {
  return spawnSync(shell, ["-c", "exit 0"]).status === 0;
}

const program = await realProgram();

describe("completion scripts", () => {
  const tree = describeProgram(program);

  it("cover every registered command and each of its long options, in every shell", () => {
    const names = program.commands.map((command) => command.name());
    expect(names).toEqual(expect.arrayContaining(["plan", "apply", "logs", "job", "frontend", "completion"]));
    for (const shell of SHELLS) {
      const script = renderCompletion(tree, shell);
      const commandMark = {
        bash: (name: string) => `\n    ${name})`,
        zsh: (name: string) => `\n    '${name}:`,
        fish: (name: string) => `-a ${name} -d`,
      }[shell];
      for (const command of program.commands) {
        expect(script, `${shell}: ${command.name()}`).toContain(commandMark(command.name()));
        for (const option of command.options) {
          const flag = shell === "fish" ? `-l ${option.long?.slice(2)}` : option.long;
          // Deprecated spellings are hidden from help, and so from completion.
          if (option.hidden) {
            expect(script, `${shell}: ${command.name()} ${option.long}`).not.toMatch(
              new RegExp(`${flag}(?![\\w-])`),
            );
            continue;
          }
          expect(script, `${shell}: ${command.name()} ${option.long}`).toContain(flag);
        }
      }
    }
  });

  it("follow the program when a command is added", () => {
    const small = new Command("pcsync");
    small.addCommand(
      new Command("ping")
        .description("Ping.\nMore text.")
        .addOption(new Option("--mode <mode>", "how").choices(["fast", "slow"]))
        .addOption(new Option("--out <file>", "where")),
    );
    const described = describeProgram(small);
    expect(described.commands.map((command) => command.name)).toEqual(["ping", "help"]);
    const ping = described.commands[0];
    expect(ping?.description).toBe("Ping");
    expect(ping?.options.map((option) => [option.flags, option.choices, option.files])).toEqual([
      [["--mode"], ["fast", "slow"], false],
      [["--out"], [], true],
      [["-h", "--help"], [], false],
    ]);
    for (const shell of SHELLS) expect(renderCompletion(described, shell)).toContain("ping");
  });

  it("offers, from `pcsync completion bash` itself, the values of every option that has a known set", async () => {
    const printed = await runCliInProcess(["completion", "bash"], { env: {}, cwd: process.cwd() });
    expect(printed.code).toBe(0);
    expect(completeInBash(printed.stdout, ["pcsync", "serve", "--profile", "p"])).toEqual(["posthog-2024"]);
    expect(completeInBash(printed.stdout, ["pcsync", "demo", "--profile", "s"])).toEqual(["seed"]);
    expect(completeInBash(printed.stdout, ["pcsync", "plan", "--family", "pi"])).toEqual([
      "pipeline_frontend_apps_configs",
    ]);
  });

  it("completes commands, options and option values in bash", () => {
    const script = renderCompletion(describeProgram(program), "bash");
    expect(completeInBash(script, ["pcsync", "lo"])).toEqual(["logs"]);
    expect(completeInBash(script, ["pcsync", "logs", "--fo"])).toEqual(["--follow", "--format"]);
    expect(completeInBash(script, ["pcsync", "logs", "--type", "W"])).toEqual(["WARN"]);
    expect(completeInBash(script, ["pcsync", "logs", "--level", "W"])).toEqual(["WARN"]);
    expect(completeInBash(script, ["pcsync", "logs", "--format", "=", ""])).toEqual(["text", "json"]);
    expect(completeInBash(script, ["pcsync", "job", "--project", ""])).toEqual([]);
    expect(completeInBash(script, ["pcsync", "completion", "z"])).toEqual(["zsh"]);
    expect(completeInBash(script, ["pcsync", "help", "fr"])).toEqual(["frontend"]);
  });

  it("offers family names for --family when given them as known values", () => {
    const script = renderCompletion(
      describeProgram(program, { "--family": ["plugin_configs", "pipeline_frontend_apps_configs"] }),
      "bash",
    );
    expect(completeInBash(script, ["pcsync", "plan", "--family", "pi"])).toEqual([
      "pipeline_frontend_apps_configs",
    ]);
  });

  it("quotes descriptions for zsh and fish", () => {
    const small = new Command("pcsync");
    small.addCommand(new Command("x").addOption(new Option("--y <v>", "it's [a]: b\\c")));
    const described = describeProgram(small);
    expect(renderCompletion(described, "zsh")).toContain(`'--y[it'\\''s \\[a\\]\\: b\\\\c]:v: '`);
    expect(renderCompletion(described, "fish")).toContain(`-l y -d 'it\\'s [a]: b\\\\c' -x`);
  });

  it.skipIf(!hasShell("zsh"))("parse in zsh and register the completion function", () => {
    const script = renderCompletion(describeProgram(program), "zsh");
    const output = execFileSync(
      "zsh",
      [
        "-f",
        "-c",
        'autoload -Uz compinit && compinit -u -D && eval "$1" && print -r -- $_comps[pcsync]',
        "zsh",
        script,
      ],
      { encoding: "utf8" },
    );
    expect(output.trim()).toBe("_pcsync");
  });

  it.skipIf(!hasShell("fish"))("complete commands and option values in fish", () => {
    const script = renderCompletion(describeProgram(program), "fish");
    const complete = (line: string) =>
      execFileSync("fish", ["--no-config", "-c", "eval $argv[1]; complete -C $argv[2]", script, line], {
        encoding: "utf8",
      })
        .split("\n")
        .filter((entry) => entry !== "")
        .map((entry) => entry.split("\t")[0]);
    expect(complete("pcsync lo")).toEqual(["logs"]);
    expect(complete("pcsync logs --type W")).toEqual(["WARN"]);
    expect(complete("pcsync logs --level W")).toEqual(["WARN"]);
    expect(complete("pcsync completion ")).toEqual(["bash", "fish", "zsh"]);
  });
});

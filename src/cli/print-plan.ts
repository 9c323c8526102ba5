// Printing a plan, an apply's JSON result or a plan file. Text and markdown show the API key as
// [REDACTED]; the JSON documents, which are read back, are written exactly, or refused if they hold it.

import type { ApplyReport } from "../apply/types.js";
import { describeDevice, type RunInput } from "../files/output-target.js";
import { writeFileSafely } from "../files/write-file.js";
import { InputError } from "../input-error.js";
import { neutraliseJson } from "../neutralise-server-text.js";
import { locateSecretsInPlan, serializePlan } from "../plan/plan-file.js";
import { isForceable } from "../plan/safety-guards.js";
import type { Plan } from "../plan/types.js";
import { locateSecrets, REDACTED, type SecretRegistry } from "../redact.js";
import { describeGuard } from "../render/guard-message.js";
import { type PlanNotice, renderPlan } from "../render/index.js";
import { type CliIo, redactForDisplay, useColour } from "./cli-io.js";
import type { OutputFormat } from "./shared-options.js";

/** `followed`: lines follow it, which in markdown must not run on into its last paragraph. */
export function printPlan(
  plan: Plan,
  format: OutputFormat,
  io: CliIo,
  options: { forced?: boolean; verbose?: boolean; followed?: boolean; notices?: readonly PlanNotice[] } = {},
): void {
  if (format === "json") {
    // The notices ride in the document, so that a script reading it knows what stderr says.
    const notices = options.notices ?? [];
    const shown =
      notices.length === 0 ? plan : { ...plan, notices: notices.map(({ level, text }) => ({ level, text })) };
    io.stdout.write(planDocument(shown, "the JSON plan", io.secrets));
    return;
  }
  renderPlan(redactForDisplay(plan, io), format, io.stdout, {
    colour: useColour(io.stdout, io.env),
    forced: options.forced === true,
    verbose: options.verbose === true,
    ...(options.notices === undefined ? {} : { notices: options.notices }),
  });
  if (format === "markdown" && options.followed === true) io.stdout.write("\n");
}

const PLAN_REMEDY =
  "If the service puts the key's text into these records, fix them there; to look at the plan, use --format text or markdown, which show the key as [REDACTED].";

function planDocument(plan: Plan, what: string, secrets: SecretRegistry, remedy = PLAN_REMEDY): string {
  const text = serializePlan(plan);
  refuseSecretIn(text, what, () => locateSecretsInPlan(plan, secrets), remedy, secrets);
  return text;
}

/** Refuses, before anything is changed, a plan that `--format json` could not print. */
export function checkPlanPrintableAsJson(plan: Plan, secrets: SecretRegistry): void {
  planDocument(plan, "the JSON output", secrets, `${PLAN_REMEDY} Nothing was changed.`);
}

export function printApplyJson(
  plan: Plan,
  result: ApplyReport | null,
  io: CliIo,
  rollout?: object,
  /** Why the run was refused once its plan was made: nothing was written. */
  refused?: string,
): void {
  // JSON leaves out the keys whose value is undefined: the rollout and the refusal when there are none.
  const text = `${neutraliseJson(JSON.stringify({ plan, result, rollout, refused }, null, 2))}\n`;
  const locate = () => {
    const places = locateSecrets(result, io.secrets).map((path) => {
      const outcome =
        path[0] === "outcomes" && typeof path[1] === "number" ? result?.outcomes[path[1]] : undefined;
      if (outcome === undefined) return "the apply result";
      const record =
        outcome.id === null ? `the ${outcome.action} from ${outcome.source}` : `record ${outcome.id}`;
      return `the outcome of project ${outcome.project} ${outcome.family} ${record}, field ${String(path[2])}`;
    });
    return [...new Set([...locateSecretsInPlan(plan, io.secrets), ...places])];
  };
  refuseSecretIn(
    text,
    "the JSON result of this apply",
    locate,
    `The apply itself ran to the end${result === null ? "" : ` (${result.done} done, ${result.failed} failed, ${result.skipped} skipped)`}; run \`pcsync plan\` to see the state, or apply with --format text, which shows the key as ${REDACTED}.`,
    io.secrets,
  );
  io.stdout.write(text);
}

export async function savePlan(
  plan: Plan,
  path: string,
  io: CliIo,
  inputs: readonly RunInput[],
): Promise<void> {
  const text = planDocument(plan, `the plan file ${path}`, io.secrets);
  const target = await writeFileSafely(path, text, { cwd: io.cwd, inputs });
  // A plan with waves is for review: `apply --plan` refuses it, since a rollout reads each wave again.
  const saved =
    plan.rollout !== undefined
      ? `${target.kind === "file" ? "Saved" : "Wrote"} the plan to ${path}, for review: it rolls out in waves, so apply the manifest it was made from with: pcsync apply -f MANIFEST (apply --plan refuses a plan with waves)`
      : target.kind === "file"
        ? `Saved the plan to ${path}; apply it with: pcsync apply --plan ${path}`
        : `Wrote the plan to ${path} (${describeDevice(target.device)}); to apply it later, save it to a file with -o FILE`;
  io.stderr.write(`${saved}\n`);
}

export function writeNotices(notices: readonly PlanNotice[], io: CliIo): void {
  for (const notice of notices) io.stderr.write(`${notice.level}: ${notice.text}\n`);
}

export function warnGuards(plan: Plan, io: CliIo, force: boolean): void {
  for (const guard of plan.guards) {
    const overridden = force && isForceable(guard.rule);
    const message = describeGuard(guard, { forced: force });
    io.stderr.write(`warning: ${overridden ? "--force overrides" : "apply will refuse"}: ${message}\n`);
  }
}

/** For a document written exactly. */
export function refuseSecretIn(
  text: string,
  what: string,
  locate: () => readonly string[],
  remedy: string,
  secrets: SecretRegistry,
): void {
  if (secrets.contains(text))
    throw new InputError("secret_in_output", {
      what,
      places: locate(),
      remedy,
      shortestSecret: secrets.shortestSecretLength,
    });
}

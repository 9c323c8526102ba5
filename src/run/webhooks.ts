// Where a run's events go (`watch`'s, a rollout's): the --webhook URLs checked once, and the signing
// secret read from its file; both are registered as secrets, so that no output shows them.

import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { isLoopbackHost } from "../api/index.js";
import { InputError } from "../input-error.js";
import type { WebhookFormat } from "../notify/webhook-payload.js";
import { displayWebhook, WEBHOOK_DEFAULTS, WebhookSender } from "../notify/webhook-sender.js";
import type { SecretRegistry } from "../redact.js";
import { registerSecretWords } from "./credentials.js";
import type { RunIo } from "./run-io.js";

export interface WebhookFlags {
  webhook?: string[];
  webhookSecretFile?: string;
}

/** Undefined without a URL; `withoutUrl` refuses a secret file given without one. */
export async function createWebhookSender(
  flags: WebhookFlags,
  io: RunIo,
  options: { format: WebhookFormat; timeoutMs?: number; withoutUrl: string },
): Promise<WebhookSender | undefined> {
  const urls = parseWebhooks(flags.webhook ?? [], io);
  const secretFile = flags.webhookSecretFile;
  if (urls.length === 0) {
    if (secretFile !== undefined) throw new InputError("usage", options.withoutUrl);
    return undefined;
  }
  const secret =
    secretFile === undefined ? undefined : await readWebhookSecret(secretFile, io.cwd, io.secrets);
  return new WebhookSender({
    ...WEBHOOK_DEFAULTS,
    urls,
    format: options.format,
    secret,
    timeoutMs: options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
    secrets: io.secrets,
    warn: (line) => io.stderr.write(`warning: ${line}\n`),
    proxyEnvironment: io.env,
  });
}

/** A URL may hold a credential (a Slack URL's path is one): it is never printed. */
function parseWebhooks(values: readonly string[], io: RunIo): URL[] {
  return values.map((value) => {
    registerSecretWords(value, io.secrets);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InputError(
        "usage",
        "--webhook must be an http:// or https:// URL (the value given is not a URL)",
      );
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new InputError("usage", `--webhook must be an http:// or https:// URL, not ${url.protocol}`);
    }
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      io.stderr.write(
        `warning: --webhook ${displayWebhook(url)} is plain http: events cross the network unencrypted\n`,
      );
    }
    return url;
  });
}

async function readWebhookSecret(path: string, cwd: string, secrets: SecretRegistry): Promise<string> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(
      "usage",
      `--webhook-secret-file ${path}: ${code === "ENOENT" ? "no such file" : `cannot be read (${code ?? "unknown error"})`}`,
    );
  }
  const secret = text.replace(/\r?\n$/, "");
  if (secret.trim() === "") throw new InputError("usage", `--webhook-secret-file ${path}: the file is empty`);
  registerSecretWords(secret, secrets);
  return secret;
}

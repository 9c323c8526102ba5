// The one secret matcher: what a leaked API key looks like, and the registry of a run's secrets, which
// redacts output and refuses documents and manifest values that hold one.

export const REDACTED = "[REDACTED]";

/**
 * Shorter text occurs in ordinary text (base64 in any hash, "ro" in "Property"): a shorter hex or
 * base64 form is not matched; a shorter secret is found inside text only by redaction and refusal of
 * documents read back (a leak is worse than confetti), and refused as input only as the whole value.
 */
export const MIN_SECRET_LENGTH = 8;

type CharEncoder = (char: string) => string;

const hexOf = (char: string, upper: boolean): string => {
  const hex = char.charCodeAt(0).toString(16).padStart(2, "0");
  return upper ? hex.toUpperCase() : hex;
};
const percent = (char: string, upper: boolean): string => `%${hexOf(char, upper)}`;
const unicodeEscape = (char: string, upper: boolean): string => `\\u00${hexOf(char, upper)}`;
const jsonEscape: CharEncoder = (char) => JSON.stringify(char).slice(1, -1);

/** How servers, proxies and libraries write a string into a URL or JSON; the key is visible ASCII (checkApiKey). */
const TEXT_SCHEMES: readonly CharEncoder[] = [
  (char) => char,
  // encodeURIComponent, with upper- and lower-case hex digits.
  (char) => encodeURIComponent(char),
  (char) => (char === encodeURIComponent(char) ? char : percent(char, false)),
  // RFC 3986 strict (also !'()*), and HTML form encoding (URLSearchParams, also ~).
  (char) => (/[A-Za-z0-9\-._~]/.test(char) ? char : percent(char, true)),
  (char) => (/[A-Za-z0-9\-._~]/.test(char) ? char : percent(char, false)),
  (char) => (/[A-Za-z0-9\-._*]/.test(char) ? char : percent(char, true)),
  // JSON: plain, with "\/" (PHP), and HTML-safe (Go: <>& as lower-case \u; .NET: more, upper-case).
  jsonEscape,
  (char) => (char === "/" ? "\\/" : jsonEscape(char)),
  (char) => ("<>&".includes(char) ? unicodeEscape(char, false) : jsonEscape(char)),
  (char) => ("<>&'+`\"".includes(char) ? unicodeEscape(char, true) : jsonEscape(char)),
];

/** How an encoded form itself may be written into a URL or JSON (base64 has `+`, `/` and `=`). */
const ENCODED_SCHEMES: readonly CharEncoder[] = [
  (char) => char,
  (char) => encodeURIComponent(char),
  (char) => (char === encodeURIComponent(char) ? char : percent(char, false)),
  (char) => (char === "/" ? "\\/" : char),
];

function applyScheme(text: string, scheme: CharEncoder): string {
  let result = "";
  for (const char of text) result += scheme(char);
  return result;
}

/**
 * The base64 characters that depend only on the secret when it sits `offset` bytes into a 3-byte group
 * of a longer encoded string (`Bearer <key>`): the edge characters mix in neighbouring bytes.
 */
function base64Core(bytes: Buffer, offset: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
  const start = Math.ceil((8 * offset) / 6);
  const end = Math.floor((8 * (offset + bytes.length)) / 6);
  return encoded.slice(start, end);
}

/**
 * As is, URL-encoded, JSON-escaped, hex, base64 and base64url (alone or at any byte alignment inside a
 * longer string). Longest first, so that a longer form is replaced whole, not a shorter one inside it.
 */
export function secretForms(secret: string): readonly string[] {
  if (secret === "") return [];
  const cached = formsBySecret.get(secret);
  if (cached !== undefined) return cached;
  const forms = new Set<string>();
  for (const scheme of TEXT_SCHEMES) forms.add(applyScheme(secret, scheme));
  const bytes = Buffer.from(secret, "utf8");
  const encoded = new Set<string>([bytes.toString("hex"), bytes.toString("hex").toUpperCase()]);
  const padded = bytes.toString("base64");
  encoded.add(padded).add(padded.replace(/=+$/, "")).add(bytes.toString("base64url"));
  for (const offset of [0, 1, 2] as const) {
    const core = base64Core(bytes, offset);
    encoded.add(core).add(core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  for (const form of encoded) {
    if (form.length < MIN_SECRET_LENGTH) continue;
    for (const scheme of ENCODED_SCHEMES) forms.add(applyScheme(form, scheme));
  }
  const sorted = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  formsBySecret.set(secret, sorted);
  return sorted;
}

// The manifest loader asks for every string it interpolates; a run knows one or two secrets.
const formsBySecret = new Map<string, string[]>();

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** [start, end) */
export interface SecretMatch {
  start: number;
  end: number;
}

/** The API key is registered as soon as it is read; every writer out of the process asks at write time. */
export class SecretRegistry {
  static of(secretList: readonly string[]): SecretRegistry {
    const registry = new SecretRegistry();
    for (const secret of secretList) registry.register(secret);
    return registry;
  }

  readonly #secrets = new Set<string>();
  #forms: readonly string[] = [];
  #pattern: RegExp | undefined;
  #firstChars = new Set<string>();
  /** For `holds`: the forms of secrets shorter than MIN_SECRET_LENGTH, and a pattern of the others'. */
  #wholeForms = new Set<string>();
  #embeddedPattern: RegExp | undefined;

  /** White space and all (`Bearer <key>`). */
  register(secret: string): void {
    if (secret === "" || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    const forms = new Set<string>();
    for (const known of this.#secrets) for (const form of secretForms(known)) forms.add(form);
    this.#forms = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.#pattern = new RegExp(this.#forms.map(escapeRegExp).join("|"), "g");
    this.#firstChars = new Set(this.#forms.map((form) => form.charAt(0)));
    if (secret.length < MIN_SECRET_LENGTH) {
      for (const form of secretForms(secret)) this.#wholeForms.add(form);
      return;
    }
    const embedded = [...this.#secrets].filter((known) => known.length >= MIN_SECRET_LENGTH);
    const embeddedForms = [...new Set(embedded.flatMap((known) => secretForms(known)))];
    this.#embeddedPattern = new RegExp(embeddedForms.map(escapeRegExp).join("|"));
  }

  get active(): boolean {
    return this.#pattern !== undefined;
  }

  /** 0 when none; a short one matches ordinary text. */
  get shortestSecretLength(): number {
    const lengths = [...this.#secrets].map((secret) => secret.length);
    return lengths.length === 0 ? 0 : Math.min(...lengths); // bounded-spread: a run's one or two secrets
  }

  /** Left to right, not overlapping, longest form first. */
  matches(text: string): SecretMatch[] {
    if (this.#pattern === undefined) return [];
    return Array.from(text.matchAll(this.#pattern), (match) => ({
      start: match.index,
      end: match.index + match[0].length,
    }));
  }

  contains(text: string): boolean {
    return this.matches(text).length > 0;
  }

  /** For input values (a manifest's): a secret shorter than MIN_SECRET_LENGTH only as the whole text. */
  holds(text: string): boolean {
    return this.#wholeForms.has(text) || (this.#embeddedPattern?.test(text) ?? false);
  }

  redact(text: string): { text: string; count: number } {
    const pattern = this.#pattern;
    if (pattern === undefined) return { text, count: 0 };
    let count = 0;
    const redacted = text.replace(pattern, () => {
      count += 1;
      return REDACTED;
    });
    return { text: redacted, count };
  }

  /**
   * The start of the earliest suffix of `text` that the next characters could complete into a secret
   * form, or `text.length`; a form may hold white space (`Bearer <key>`).
   */
  incompleteSuffixStart(text: string): number {
    let earliest = text.length;
    const longest = this.#forms[0]?.length ?? 0;
    const from = Math.max(0, text.length - longest + 1);
    for (let index = text.length - 1; index >= from; index -= 1) {
      const char = text.charAt(index);
      if (!this.#firstChars.has(char)) continue;
      const suffix = text.slice(index);
      if (this.#forms.some((form) => form.length > suffix.length && form.startsWith(suffix)))
        earliest = index;
    }
    return earliest;
  }

  /** A cut inside a secret form (which redaction would then not recognise) moves past the form. */
  excerpt(text: string, max: number): string {
    if (text.length <= max) return text;
    let cut = max;
    for (const match of this.matches(text)) {
      if (match.start < cut && match.end > cut) cut = match.end;
    }
    return text.slice(0, cut);
  }
}

// The manifest loader asks about every string it reads, with the list of secrets it was handed.
const registriesByList = new WeakMap<readonly string[], SecretRegistry>();

export function registryOf(secretList: readonly string[]): SecretRegistry {
  const registry = registriesByList.get(secretList) ?? SecretRegistry.of(secretList);
  registriesByList.set(secretList, registry);
  return registry;
}

export type ValuePath = ReadonlyArray<string | number>;

/**
 * Renderers cut and diff strings, and a cut key would not be recognised at the output edge, so data is
 * redacted before. Object keys are structure (`from`, `to`) and stay.
 */
export function redactDeep<T>(value: T, registry: SecretRegistry): { value: T; count: number } {
  if (!registry.active) return { value, count: 0 };
  let count = 0;
  const visit = (item: unknown): unknown => {
    if (typeof item === "string") {
      const result = registry.redact(item);
      count += result.count;
      return result.text;
    }
    if (Array.isArray(item)) return item.map(visit);
    if (typeof item === "object" && item !== null && !(item instanceof Date)) {
      return Object.fromEntries(Object.entries(item).map(([key, member]) => [key, visit(member)]));
    }
    return item;
  };
  return { value: visit(value) as T, count };
}

/** Values and object keys; also as written in JSON, whose escaping could complete a form. */
export function locateSecrets(value: unknown, registry: SecretRegistry): ValuePath[] {
  const found: ValuePath[] = [];
  if (!registry.active) return found;
  const holdsSecret = (text: string) =>
    registry.contains(text) || registry.contains(JSON.stringify(text).slice(1, -1));
  const visit = (item: unknown, path: Array<string | number>): void => {
    if (typeof item === "string" || typeof item === "number") {
      if (holdsSecret(String(item))) found.push(path);
    } else if (Array.isArray(item)) {
      for (const [index, member] of item.entries()) visit(member, [...path, index]);
    } else if (typeof item === "object" && item !== null) {
      for (const [key, member] of Object.entries(item)) {
        if (holdsSecret(key)) found.push([...path, key]);
        visit(member, [...path, key]);
      }
    }
  };
  visit(value, []);
  return found;
}

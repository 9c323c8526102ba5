// A form body as DRF's request.data sees it (files merged in after the fields, so of a field and a
// file of one name the file is read), and the urlencoded form parsed as Django's QueryDict does.

import { type Decode, decodeBody, percentDecode } from "./charset.js";
import { parseError } from "./http-error.js";

/** Django's DATA_UPLOAD_MAX_NUMBER_FIELDS and DATA_UPLOAD_MAX_NUMBER_FILES: more is a 400. */
const MAX_FORM_FIELDS = 1000;
const MAX_FORM_FILES = 100;

/** What the service keeps of an attachment: not its contents. */
export class UploadedFile {
  constructor(
    readonly fileName: string,
    readonly size = 0,
    readonly contentType = "",
  ) {}
}

export type FormValue = string | UploadedFile;

export class FormBody {
  readonly #fields = new Map<string, string[]>();
  readonly #files = new Map<string, UploadedFile[]>();
  #fieldCount = 0;
  #fileCount = 0;

  /** Whether or not it is kept: one past the limit is a 400. */
  countField(): void {
    this.#fieldCount += 1;
    if (this.#fieldCount <= MAX_FORM_FIELDS) return;
    throw parseError(
      `The number of GET/POST parameters exceeded settings.DATA_UPLOAD_MAX_NUMBER_FIELDS (${MAX_FORM_FIELDS}).`,
    );
  }

  addField(name: string, value: string): void {
    this.#fields.set(name, [...(this.#fields.get(name) ?? []), value]);
  }

  addFile(name: string, file: UploadedFile): void {
    this.#fileCount += 1;
    if (this.#fileCount > MAX_FORM_FILES)
      throw parseError(
        `The number of files exceeded settings.DATA_UPLOAD_MAX_NUMBER_FILES (${MAX_FORM_FILES}).`,
      );
    this.#files.set(name, [...(this.#files.get(name) ?? []), file]);
  }

  /** In the order first sent (`request.POST`'s keys). */
  fieldNames(): string[] {
    return [...this.#fields.keys()];
  }

  /** `request.FILES.items()`. */
  fileEntries(): [string, UploadedFile][] {
    return [...this.#files].flatMap(([name, files]) => {
      const last = files.at(-1);
      return last === undefined ? [] : [[name, last] as [string, UploadedFile]];
    });
  }

  /** Files left out (Django's `request.POST`). */
  textField(name: string): string | undefined {
    return this.#fields.get(name)?.at(-1);
  }

  /** What the serializer reads for a name sent more than once: the last value, a file's if any. */
  value(name: string): FormValue | undefined {
    return this.#files.get(name)?.at(-1) ?? this.#fields.get(name)?.at(-1);
  }
}

const unquote = (text: string, decode: Decode) => percentDecode(text.replaceAll("+", " "), decode);

/** Python's parse_qsl with blank values kept, percent-escapes read in the body's charset. */
export function parseUrlencodedBody(raw: Buffer, decode: Decode): FormBody {
  const text = decodeBody(raw, decode);
  const form = new FormBody();
  if (text === "") return form;
  for (const piece of text.split("&")) {
    // Counted as Python does, empty pieces included.
    form.countField();
    if (piece === "") continue;
    const equals = piece.indexOf("=");
    // A name without `=` is a field with an empty value.
    const [name, value] = equals === -1 ? [piece, ""] : [piece.slice(0, equals), piece.slice(equals + 1)];
    form.addField(unquote(name, decode), unquote(value, decode));
  }
  return form;
}

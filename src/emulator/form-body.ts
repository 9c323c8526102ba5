// A form-encoded or multipart body as the real service's serializer sees it (Django REST
// framework's request.data): text fields by name, every value kept, and uploaded files merged in
// after the fields, so that of a field and a file sent under one name, the file is what is read.

import { parseError } from "./http-error.js";

/** Django's DATA_UPLOAD_MAX_NUMBER_FIELDS and DATA_UPLOAD_MAX_NUMBER_FILES: more is a 400. */
export const MAX_FORM_FIELDS = 1000;
export const MAX_FORM_FILES = 100;

export function tooManyFields() {
  return parseError(
    `The number of GET/POST parameters exceeded settings.DATA_UPLOAD_MAX_NUMBER_FIELDS (${MAX_FORM_FIELDS}).`,
  );
}

export function tooManyFiles() {
  return parseError(
    `The number of files exceeded settings.DATA_UPLOAD_MAX_NUMBER_FILES (${MAX_FORM_FILES}).`,
  );
}

/** An uploaded file: what the service keeps of an attachment (its contents are not kept). */
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

  addField(name: string, value: string): void {
    this.#fields.set(name, [...(this.#fields.get(name) ?? []), value]);
  }

  addFile(name: string, file: UploadedFile): void {
    this.#files.set(name, [...(this.#files.get(name) ?? []), file]);
  }

  has(name: string): boolean {
    return this.#fields.has(name) || this.#files.has(name);
  }

  /** The names of the text fields, in the order first sent (`request.POST`'s keys). */
  fieldNames(): string[] {
    return [...this.#fields.keys()];
  }

  /** Each file field's name and its last file (`request.FILES.items()`). */
  fileEntries(): [string, UploadedFile][] {
    return [...this.#files].flatMap(([name, files]) => {
      const last = files.at(-1);
      return last === undefined ? [] : [[name, last] as [string, UploadedFile]];
    });
  }

  /** The last text field of this name, files left out (Django's `request.POST`). */
  textField(name: string): string | undefined {
    return this.#fields.get(name)?.at(-1);
  }

  /** What the serializer reads for a name sent more than once: the last value, a file's if any. */
  value(name: string): FormValue | undefined {
    return this.#files.get(name)?.at(-1) ?? this.#fields.get(name)?.at(-1);
  }
}

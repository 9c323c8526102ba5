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

/** An uploaded file: the emulator keeps no attachments, so only that it is a file matters. */
export class UploadedFile {
  constructor(readonly fileName: string) {}
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

  /** What the serializer reads for a name sent more than once: the last value, a file's if any. */
  value(name: string): FormValue | undefined {
    return this.#files.get(name)?.at(-1) ?? this.#fields.get(name)?.at(-1);
  }
}

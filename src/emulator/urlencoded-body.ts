// Parses an application/x-www-form-urlencoded body as the real service does (Django's QueryDict,
// Python's parse_qsl with blank values kept): `&`-separated, `+` for a space, percent-escapes read
// in the body's charset.

import { type Decode, decodeBody, percentDecode } from "./charset.js";
import { FormBody, MAX_FORM_FIELDS, tooManyFields } from "./form-body.js";

const unquote = (text: string, decode: Decode) => percentDecode(text.replaceAll("+", " "), decode);

export function parseUrlencodedBody(raw: Buffer, decode: Decode): FormBody {
  const text = decodeBody(raw, decode);
  const form = new FormBody();
  if (text === "") return form;
  const pieces = text.split("&");
  // Counted as Python does, empty pieces included.
  if (pieces.length > MAX_FORM_FIELDS) throw tooManyFields();
  for (const piece of pieces) {
    if (piece === "") continue;
    const equals = piece.indexOf("=");
    // A name without `=` is a field with an empty value.
    const [name, value] = equals === -1 ? [piece, ""] : [piece.slice(0, equals), piece.slice(equals + 1)];
    form.addField(unquote(name, decode), unquote(value, decode));
  }
  return form;
}

// The one colour helper of pcsync's output: picocolors' ANSI codes, each closing only its own
// attribute. Whether to colour is the caller's decision (the CLI's useColour reads NO_COLOR,
// FORCE_COLOR and whether stdout is a terminal); picocolors' own reading of the environment is not used.

import { createColors } from "picocolors";

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "magenta" | "cyan";

/** `text` in `style`, or as it is when colour is off. */
export type Paint = (style: Style, text: string) => string;

const COLOURS = createColors(true);

export function createPaint(colour: boolean): Paint {
  if (!colour) return (_style, text) => text;
  // An empty text gets no codes: there is nothing to see.
  return (style, text) => (text === "" ? text : COLOURS[style](text));
}

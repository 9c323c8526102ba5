// The one colour helper of pcsync's output. Whether to colour is the caller's decision (the CLI's
// useColour): picocolors' own reading of the environment is not used.

import { createColors } from "picocolors";

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "magenta" | "cyan";

export type Paint = (style: Style, text: string) => string;

const COLOURS = createColors(true);

export function createPaint(colour: boolean): Paint {
  if (!colour) return (_style, text) => text;
  // An empty text gets no codes: there is nothing to see.
  return (style, text) => (text === "" ? text : COLOURS[style](text));
}

// A path as it can be pasted into a shell: the commands pcsync suggests (undo a run, finish a
// rollout) name journals that way, from the CLI and from the use cases alike.

export function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

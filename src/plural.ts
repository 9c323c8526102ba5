// A count with its noun for a message: `1 attempt`, `3 attempts`, `2 families`.

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** `project 1`, or `projects 1, 2`. */
export function nounAndList(items: readonly string[], one: string, many = `${one}s`): string {
  return `${items.length === 1 ? one : many} ${items.join(", ")}`;
}

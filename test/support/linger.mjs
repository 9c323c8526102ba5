// Preloaded with `node --import` by tests of a signal that comes once a command has ended: keeps the
// process alive for PCSYNC_TEST_LINGER_MS (3 s unless told), as a slow flush of its output or a
// connection still closing would.

setTimeout(() => undefined, Number(process.env.PCSYNC_TEST_LINGER_MS ?? "3000"));

// Preloaded with `node --import` by the test of a signal that comes the moment a command that handles
// signals (apply) stops listening: the second SIGTERM listener that goes (the first is the hold of
// the binary's start, released as apply starts listening) is apply's own, at its end. SIGTERM is sent
// right then, before the run has returned to the binary.

let removed = 0;
const off = process.off.bind(process);
const sendAtEnd = (event) => {
  if (event !== "SIGTERM") return;
  removed += 1;
  if (removed === 2) process.kill(process.pid, "SIGTERM");
};
process.off = (event, listener) => {
  const result = off(event, listener);
  sendAtEnd(event);
  return result;
};
process.removeListener = process.off;

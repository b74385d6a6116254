// Progress of a sequence of steps on the terminal: a spinner on a TTY, plain lines elsewhere.
const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export async function step<T>(title: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let frame = 0;
  const timer = tty
    ? setInterval(() => process.stderr.write(`\r${frames[frame++ % frames.length]} ${title}`), 80)
    : undefined;
  if (!tty) process.stderr.write(`… ${title}\n`);
  try {
    const value = await fn();
    const took = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(`${tty ? "\r\x1b[2K" : ""}✔ ${title} (${took} s)\n`);
    return value;
  } catch (error) {
    process.stderr.write(`${tty ? "\r\x1b[2K" : ""}✖ ${title}\n`);
    throw error;
  } finally {
    if (timer) clearInterval(timer);
  }
}

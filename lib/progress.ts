// Progress of start-up steps on the terminal, several of which may run at once: each finished step on a line
// of its own with how long it took; on a TTY one spinner line below them names the steps still running,
// elsewhere a plain line announces each step as it begins.
const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const tty = process.stderr.isTTY;
const active: string[] = [];
let frame = 0;
let timer: NodeJS.Timeout | undefined;

function spinnerLine(): string {
  if (active.length === 0) return "";
  const line = `${frames[frame % frames.length]} ${active.join(" · ")}`;
  const width = (process.stderr.columns || 80) - 1;
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** Rewrites the spinner line, first writing `text` (whole lines) above it. */
function redraw(text = "") {
  if (!tty) {
    process.stderr.write(text);
    return;
  }
  process.stderr.write(`\r\x1b[2K${text}${spinnerLine()}`);
}

function begin(title: string) {
  active.push(title);
  if (!tty) {
    redraw(`… ${title}\n`);
    return;
  }
  timer ??= setInterval(() => {
    frame++;
    redraw();
  }, 80);
  redraw();
}

function end(title: string, line: string) {
  active.splice(active.indexOf(title), 1);
  if (timer && active.length === 0) {
    clearInterval(timer);
    timer = undefined;
  }
  redraw(`${line}\n`);
}

/** Runs `fn` as the step `title`: shown while it runs, then "✔ title (N.N s)" (or "✖ title" if it failed).
 * Steps may overlap. */
export async function step<T>(title: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  begin(title);
  try {
    const value = await fn();
    end(title, `✔ ${title} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return value;
  } catch (error) {
    end(title, `✖ ${title}`);
    throw error;
  }
}

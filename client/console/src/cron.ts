// A schedule in plain words: "every day at 03:00 (Europe/Berlin)". Only
// words: the fire times themselves always come from the server.
const days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const months = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];
const macros: Record<string, string> = {
  "@yearly": "every year on 1 January at 00:00",
  "@annually": "every year on 1 January at 00:00",
  "@monthly": "every month on the 1st at 00:00",
  "@weekly": "every Sunday at 00:00",
  "@daily": "every day at 00:00",
  "@midnight": "every day at 00:00",
  "@hourly": "every hour at minute 0",
};

const two = (s: string) => s.padStart(2, "0");
const isNum = (s: string) => /^\d+$/.test(s);

/* A field's values in words, or null when it is too intricate to say well. */
function list(field: string, name: (v: number) => string): string | null {
  const parts = field.split(",");
  const words: string[] = [];
  for (const p of parts) {
    const range = /^(\d+)-(\d+)$/.exec(p);
    if (isNum(p)) words.push(name(Number(p)));
    else if (range) words.push(`${name(Number(range[1]))} to ${name(Number(range[2]))}`);
    else return null;
  }
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}` : words[0];
}

function cron(fields: string[]): string | null {
  let sec = "0";
  if (fields.length === 6) sec = fields.shift()!;
  if (fields.length !== 5) return null;
  const [min, hour, dom, mon, dow] = fields;
  let when: string | null = null;
  const step = /^\*\/(\d+)$/;
  if (sec === "*" && min === "*" && hour === "*") when = "every second";
  else if (sec !== "0" && !(isNum(sec) && min === "*" && hour === "*")) {
    const s = step.exec(sec);
    if (!s || min !== "*" || hour !== "*") return null;
    when = `every ${s[1]} seconds`;
  } else if (min === "*" && hour === "*") when = "every minute";
  else if (step.test(min) && hour === "*") when = `every ${step.exec(min)![1]} minutes`;
  else if (isNum(min) && hour === "*") when = `every hour at minute ${Number(min)}`;
  else if (isNum(min) && step.test(hour)) when = `every ${step.exec(hour)![1]} hours at minute ${Number(min)}`;
  else if (isNum(min)) {
    const hours = list(hour, (h) => `${two(String(h))}:${two(min)}`);
    if (!hours) return null;
    when = `at ${hours}`;
  } else return null;

  const on: string[] = [];
  if (dow !== "*" && dow !== "?") {
    const d = list(dow, (v) => days[v % 7]);
    if (!d) return null;
    on.push(`on ${d}`);
  }
  if (dom !== "*" && dom !== "?") {
    const d = list(dom, (v) => `day ${v}`);
    if (!d) return null;
    on.push(`on ${d} of the month`);
  }
  if (mon !== "*") {
    const m = list(mon, (v) => months[v - 1] ?? String(v));
    if (!m) return null;
    on.push(`in ${m}`);
  }
  const day = on.length === 0 && when.startsWith("at") ? "every day " : "";
  return `${day}${when}${on.length ? " " + on.join(", ") : ""}`;
}

export function scheduleWords(text: string, zone: string): string {
  const t = text.trim();
  if (t === "") return "only when triggered";
  const z = ` (${zone || "UTC"})`;
  const every = /^@every\s+(\S+)(?:\s+from\s+(.+))?$/.exec(t);
  if (every) return `every ${every[1]}${every[2] ? ` from ${every[2]}` : ""}`;
  if (macros[t]) return macros[t] + z;
  const words = /^[0-9*,\-/?]+( [0-9*,\-/?A-Za-z]+){4,5}$/.test(t) ? cron(t.split(/\s+/)) : null;
  return words ? words + z : `cron "${t}"${z}`;
}

// Reads a Python literal (dict, list, tuple, str, int, float, True/False/None) as a JS
// value: LangChain's tools return such reprs ("Updated todo list to [{'content': ...}]").
// Only literals are read, never evaluated; anything else returns undefined.

class Reader {
  constructor(text) {
    this.text = text;
    this.at = 0;
  }

  space() {
    while (/\s/.test(this.text[this.at] || "")) this.at += 1;
  }

  fail() {
    throw new SyntaxError(`not a Python literal at ${this.at}`);
  }

  value() {
    this.space();
    const c = this.text[this.at];
    if (c === "[" || c === "(") return this.items(c === "[" ? "]" : ")");
    if (c === "{") return this.dict();
    if (c === "'" || c === '"') return this.string(c);
    for (const [word, value] of [["True", true], ["False", false], ["None", null]]) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return value;
      }
    }
    const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(this.text.slice(this.at));
    if (!m) this.fail();
    this.at += m[0].length;
    return Number(m[0]);
  }

  items(close) {
    this.at += 1;
    const out = [];
    for (;;) {
      this.space();
      if (this.text[this.at] === close) break;
      out.push(this.value());
      this.space();
      if (this.text[this.at] === ",") this.at += 1;
      else if (this.text[this.at] !== close) this.fail();
    }
    this.at += 1;
    return out;
  }

  dict() {
    this.at += 1;
    const out = {};
    for (;;) {
      this.space();
      if (this.text[this.at] === "}") break;
      const key = this.value();
      this.space();
      if (this.text[this.at] !== ":") this.fail();
      this.at += 1;
      out[String(key)] = this.value();
      this.space();
      if (this.text[this.at] === ",") this.at += 1;
      else if (this.text[this.at] !== "}") this.fail();
    }
    this.at += 1;
    return out;
  }

  string(quote) {
    const ESC = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };
    let out = "";
    this.at += 1;
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined) this.fail();
      this.at += 1;
      if (c === quote) return out;
      if (c === "\\") {
        const e = this.text[this.at];
        this.at += 1;
        out += ESC[e] ?? `\\${e}`;
      } else out += c;
    }
  }
}

/** The value of a whole Python literal, or undefined when the text is not one. */
export function parsePython(text) {
  const reader = new Reader(String(text ?? ""));
  try {
    const value = reader.value();
    reader.space();
    return reader.at === reader.text.length ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The todo list in write_todos' return ("Updated todo list to [...]"), or null. */
export function todosFromReturn(text) {
  const m = /^\s*Updated todo list to (\[[\s\S]*\])\s*$/.exec(String(text ?? ""));
  const todos = m ? parsePython(m[1]) : undefined;
  return Array.isArray(todos) ? todos : null;
}

// Warning headers as the reference writes them: one `Warning: 299 - "<text>"` header per warning, in
// the order they were added, each text once; past 4,096 characters in all, every warning is cut to
// 256 characters and the rest are dropped once the cut ones fill 4,096 again. Inside the server a
// response's warnings travel as one header value joined by "\n" (which no header value may contain);
// the transports write a header line for each.
const TOTAL_RUNES = 4 * 1024;
const ITEM_RUNES = 256;

/** The header value of one warning. */
export function warningValue(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

/** Joins Warning header values (each "\n"-joined already, or undefined) into one. */
export function joinWarnings(...values: (string | undefined)[]): string | undefined {
  const parts = values.filter((v): v is string => !!v);
  return parts.length ? parts.join('\n') : undefined;
}

/** The warnings of a response, deduplicated and truncated as the reference's recorder does. */
export function finalWarnings(value: string): string {
  const texts: string[] = [];
  const seen = new Set<string>();
  for (const line of value.split('\n')) {
    const m = /^299 - (".*")$/.exec(line);
    let text: string;
    try { text = m ? JSON.parse(m[1]) : line; } catch { text = line; }
    if (!text || seen.has(text)) continue;
    seen.add(text);
    texts.push(text);
  }
  // as the reference's recorder adds them one by one: whole while they fit in TOTAL_RUNES; at the
  // first that does not, every warning so far is written again cut to ITEM_RUNES, and later ones
  // are cut too, until the cut ones fill TOTAL_RUNES
  const runes = (x: string) => [...x].length;
  const cut = (x: string) => (runes(x) > ITEM_RUNES ? [...x].slice(0, ITEM_RUNES).join('') : x);
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  for (let i = 0; i < texts.length; i++) {
    if (truncating && written >= TOTAL_RUNES) break;
    const text = truncating ? cut(texts[i]) : texts[i];
    if (truncating || written + runes(text) <= TOTAL_RUNES) {
      written += runes(text);
      out.push(warningValue(text));
      continue;
    }
    truncating = true;
    out = texts.slice(0, i + 1).map(cut);
    written = out.reduce((n, x) => n + runes(x), 0);
    out = out.map(warningValue);
  }
  return out.join('\n');
}

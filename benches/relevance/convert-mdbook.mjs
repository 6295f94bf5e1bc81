// Converts an mdBook book (its `src` folder, the one holding SUMMARY.md) into a dochub content
// tree: <out>/<project>/<subproject>/_project.yaml etc. and one page per chapter that
// SUMMARY.md links, as the book's site has them:
//  - the page id is the chapter's path without `.md`, folders joined with `-`; a folder's
//    README.md or index.md is the folder (`cli/README.md` is `cli`, the book's own is `index`);
//  - the title is the chapter's first `# ` heading (as its page shows it), else its name in
//    SUMMARY.md; `{{#title ...}}` overrides both, as in mdBook;
//  - mdBook's links preprocessor is applied: `{{#include}}` and `{{#rustdoc_include}}` (whole
//    file, `:N`, `:N:M`, `::M`, `:N:` lines or an `ANCHOR:` name), `{{#playground}}` (a rust
//    fence), and an escaped `\{{#...}}` left as the text `{{#...}}`.
//
// node convert-mdbook.mjs BOOK_SRC_DIR OUT_DIR PROJECT SUBPROJECT "Project name"
import fs from 'node:fs';
import path from 'node:path';

const [src, out, project, subproject, name] = process.argv.slice(2);
if (!src || !out || !project || !subproject || !name) {
  console.error('usage: node convert-mdbook.mjs BOOK_SRC_DIR OUT_DIR PROJECT SUBPROJECT NAME');
  process.exit(2);
}
const summaryFile = path.join(src, 'SUMMARY.md');
if (!fs.existsSync(summaryFile)) {
  console.error(`${src} has no SUMMARY.md; is it an mdBook's src folder?`);
  process.exit(1);
}

// Chapters in SUMMARY.md order: `[Name](path.md)` links, drafts (`()`) left out.
const chapters = [];
for (const m of fs.readFileSync(summaryFile, 'utf8').matchAll(/\[([^\]]*)\]\(([^)\s]+\.md)\)/g)) {
  if (!chapters.some((c) => c.file === m[2])) chapters.push({ name: m[1], file: m[2] });
}

function pageId(file) {
  const parts = file.replace(/\.md$/, '').split('/');
  if (/^(README|index)$/.test(parts[parts.length - 1])) parts.pop();
  return parts.length ? parts.join('-') : 'index';
}

// The lines an include asks for: all, a range (1-based, inclusive), or an anchor's.
function select(text, spec) {
  if (!spec) return text;
  const lines = text.split('\n');
  const range = /^(\d*)(?::(\d*))?$/.exec(spec);
  if (range) {
    const from = range[1] ? Number(range[1]) - 1 : 0;
    const to = range[2] === undefined ? (range[1] ? from + 1 : lines.length) : range[2] ? Number(range[2]) : lines.length;
    return lines.slice(from, to).join('\n');
  }
  const start = lines.findIndex((l) => new RegExp(`ANCHOR:\\s*${spec}\\b`).test(l));
  if (start < 0) return '';
  const end = lines.findIndex((l, i) => i > start && new RegExp(`ANCHOR_END:\\s*${spec}\\b`).test(l));
  return lines
    .slice(start + 1, end < 0 ? lines.length : end)
    .filter((l) => !/ANCHOR(_END)?:/.test(l))
    .join('\n');
}

// mdBook's links preprocessor, enough for what books use; `depth` stops include loops.
function expand(text, dir, depth = 0) {
  return text.replace(/(\\?)\{\{#(\w+)\s*([^}]*?)\s*\}\}/g, (whole, escaped, kind, arg) => {
    if (escaped) return whole.slice(1);
    const [target, ...attrs] = arg.split(/\s+/);
    const [file, ...spec] = (target ?? '').split(':');
    // As mdBook, a file that cannot be read leaves the directive as it is.
    const full = path.join(dir, file ?? '');
    if (!['include', 'rustdoc_include', 'playground', 'title'].includes(kind)) return whole;
    if (kind !== 'title' && (!file || !fs.statSync(full, { throwIfNoEntry: false })?.isFile() || depth > 8)) return whole;
    const read = () => {
      return expand(select(fs.readFileSync(full, 'utf8'), spec.join(':')), path.dirname(full), depth + 1);
    };
    switch (kind) {
      case 'include':
      case 'rustdoc_include':
        return read();
      case 'playground':
        return `\`\`\`rust${attrs.length ? ',' + attrs.join(',') : ''}\n${read()}\n\`\`\``;
      default:
        return ''; // {{#title}}: taken as the title below
    }
  });
}

// Inline markdown out of a heading: code ticks, escapes, emphasis, link targets.
const plainTitle = (s) =>
  s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, '')
    .replace(/\\(.)/g, '$1')
    .trim();

const dir = path.join(out, project, subproject);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(out, project, '_project.yaml'), `name: ${JSON.stringify(name)}\ndescription: ${JSON.stringify(`${name}, converted from its mdBook sources.`)}\n`);
fs.writeFileSync(path.join(dir, '_subproject.yaml'), `name: ${subproject}\ndescription: ${JSON.stringify(name)}\n`);
let count = 0;
const ids = new Set();
for (const { name: chapter, file } of chapters) {
  const full = path.join(src, file);
  if (!fs.existsSync(full)) continue;
  const raw = fs.readFileSync(full, 'utf8');
  const body = expand(raw, path.dirname(full));
  const titled = /\{\{#title\s+([^}]*?)\s*\}\}/.exec(raw.replace(/\\\{\{#[^}]*\}\}/g, ''));
  const h1 = /^# +(.+?)\s*#*\s*$/m.exec(body.replace(/^(```|~~~)[\s\S]*?^\1/gm, ''));
  const title = titled ? titled[1] : h1 ? plainTitle(h1[1]) : chapter;
  const id = pageId(file);
  if (ids.has(id)) continue;
  ids.add(id);
  fs.writeFileSync(path.join(dir, `${id}.md`), `---\ntitle: ${JSON.stringify(title)}\n---\n${body}`);
  count++;
}
console.log(`${count} pages from ${summaryFile}`);

// Converts a checkout of spinframework/spin-docs into a dochub content tree:
// <out>/spin/_project.yaml, one subproject per docs version (content/v1, content/v2, ...)
// and each page as <out>/spin/<version>/<page-id>.md with YAML frontmatter.
//
// node convert-spin.mjs SPIN_DOCS_DIR OUT_DIR
import fs from 'node:fs';
import path from 'node:path';

const [docs, out] = process.argv.slice(2);
if (!docs || !out) {
  console.error('usage: node convert-spin.mjs SPIN_DOCS_DIR OUT_DIR');
  process.exit(2);
}

const content = path.join(docs, 'content');
const versions = fs
  .readdirSync(content, { withFileTypes: true })
  .filter((e) => e.isDirectory() && /^v\d+$/.test(e.name))
  .map((e) => e.name)
  .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
if (versions.length === 0) {
  console.error(`no version folders (v1, v2, ...) under ${content}`);
  process.exit(1);
}

// A TOML string value: basic ("...", whose escapes JSON shares) or literal ('...').
function tomlString(raw) {
  const basic = /^"((?:[^"\\]|\\.)*)"/.exec(raw);
  if (basic) {
    try {
      return JSON.parse(`"${basic[1]}"`);
    } catch {
      return basic[1];
    }
  }
  const literal = /^'([^']*)'/.exec(raw);
  return literal ? literal[1] : undefined;
}

// Spin docs pages carry TOML frontmatter: either between `+++` lines, or (as Bartholomew
// reads them) from the first line up to a `---` line. Returns the top-level keys and the body.
function split(text) {
  const lines = text.split('\n');
  let head;
  let body;
  if (lines[0].trim() === '+++') {
    const end = lines.indexOf('+++', 1);
    if (end < 0) return null;
    head = lines.slice(1, end);
    body = lines.slice(end + 1);
  } else {
    const end = lines.findIndex((l) => l.trim() === '---');
    if (end < 0 || !/^\s*[A-Za-z_][\w-]*\s*=/.test(lines[0])) return null;
    head = lines.slice(0, end);
    body = lines.slice(end + 1);
  }
  const fields = {};
  for (const line of head) {
    if (/^\s*\[/.test(line)) break; // [extra] and later tables
    const m = /^\s*([A-Za-z_][\w-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    const value = tomlString(m[2]);
    if (value !== undefined) fields[m[1]] = value;
  }
  return { fields, body: body.join('\n') };
}

function pages(dir, prefix = []) {
  const found = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.name.startsWith('_')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...pages(full, [...prefix, e.name]));
    else if (e.isFile() && e.name.endsWith('.md')) {
      found.push({ file: full, id: [...prefix, e.name.slice(0, -3)].join('-') });
    }
  }
  return found;
}

const project = path.join(out, 'spin');
fs.mkdirSync(project, { recursive: true });
fs.writeFileSync(
  path.join(project, '_project.yaml'),
  'name: Spin\ndescription: "Spin documentation (spinframework/spin-docs), one subproject per docs version."\n',
);
let count = 0;
for (const version of versions) {
  const dir = path.join(project, version);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, '_subproject.yaml'),
    `name: ${version}\ndescription: "Spin ${version} documentation."\n`,
  );
  for (const { file, id } of pages(path.join(content, version))) {
    const page = split(fs.readFileSync(file, 'utf8'));
    if (!page) continue; // not a page: no frontmatter
    const title = page.fields.title ?? id;
    let front = `---\ntitle: ${JSON.stringify(title)}\n`;
    if (page.fields.description) front += `summary: ${JSON.stringify(page.fields.description)}\n`;
    front += '---\n';
    fs.writeFileSync(path.join(dir, `${id}.md`), front + page.body);
    count++;
  }
}
console.log(`${count} pages in ${versions.length} versions (${versions.join(', ')})`);

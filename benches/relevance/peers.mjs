// Indexes a converted content tree (convert.mjs) with two common docs-site search engines
// and prints each one's top 10 for every query, one JSON line per query:
// {"query": .., "minisearch": [paths], "lunr": [paths]}, paths as spin/<version>/<page-id>.
//  - MiniSearch with VitePress's local search options (title, headings, body text);
//  - lunr with MkDocs's title boost.
// Pages are indexed whole, not split into sections as both sites do, to match dochub's hits.
//
// node peers.mjs CONTENT_DIR QUERIES_JSON
import fs from 'node:fs';
import path from 'node:path';
import lunr from 'lunr';
import MiniSearch from 'minisearch';

const [root, queriesFile] = process.argv.slice(2);
if (!root || !queriesFile) {
  console.error('usage: node peers.mjs CONTENT_DIR QUERIES_JSON');
  process.exit(2);
}
const TOP = 10;

// The YAML frontmatter convert.mjs writes: `---`, `title: "<json string>"`, ..., `---`.
function parse(text) {
  const m = /^---\n([\s\S]*?)\n---\n?/.exec(text);
  const front = m ? m[1] : '';
  const body = m ? text.slice(m[0].length) : text;
  const t = /^title:\s*(.*)$/m.exec(front);
  let title = '';
  if (t) {
    try {
      title = JSON.parse(t[1]);
    } catch {
      title = t[1];
    }
  }
  const headings = [...body.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((h) => h[1]);
  return { title, titles: headings.join(' '), text: body };
}

const docs = [];
for (const project of fs.readdirSync(root).sort()) {
  const pdir = path.join(root, project);
  if (project.startsWith('_') || project.startsWith('.') || !fs.statSync(pdir).isDirectory()) continue;
  for (const sub of fs.readdirSync(pdir).sort()) {
    const sdir = path.join(pdir, sub);
    if (sub.startsWith('_') || sub.startsWith('.') || !fs.statSync(sdir).isDirectory()) continue;
    for (const file of fs.readdirSync(sdir).sort()) {
      if (!file.endsWith('.md') || file.startsWith('_') || file.startsWith('.')) continue;
      const id = `${project}/${sub}/${file.slice(0, -3)}`;
      docs.push({ id, ...parse(fs.readFileSync(path.join(sdir, file), 'utf8')) });
    }
  }
}

// VitePress (src/node/plugins/localSearchPlugin.ts and the client's default searchOptions).
const mini = new MiniSearch({
  fields: ['title', 'titles', 'text'],
  storeFields: ['title', 'titles'],
  searchOptions: { fuzzy: 0.2, prefix: true, boost: { title: 4, text: 2, titles: 1 } },
});
mini.addAll(docs);

// MkDocs (search/worker.js): title boosted 10, text, searched with idx.search(query).
const idx = lunr(function () {
  this.ref('id');
  this.field('title', { boost: 10 });
  this.field('text');
  for (const d of docs) this.add({ id: d.id, title: d.title, text: d.text });
});

const queries = JSON.parse(fs.readFileSync(queriesFile, 'utf8')).map((q) =>
  typeof q === 'string' ? q : q.query,
);
for (const q of queries) {
  const minisearch = mini.search(q).slice(0, TOP).map((r) => r.id);
  let hits = [];
  try {
    hits = idx.search(q).slice(0, TOP).map((r) => r.ref);
  } catch {
    // lunr's query syntax refuses some input (e.g. a trailing `:`); MkDocs shows nothing then.
  }
  console.log(JSON.stringify({ query: q, minisearch, lunr: hits }));
}
console.error(`peers: ${docs.length} pages indexed`);

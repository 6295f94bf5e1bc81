// Indexes a converted content tree (convert-*.mjs) with three common docs-site search engines
// and prints each one's top 10 for every query, one JSON line per query:
// {"query": .., "minisearch": [paths], "lunr": [paths], "pagefind": [paths]}, paths as
// <project>/<subproject>/<page-id>.
//  - MiniSearch with VitePress's local search options (title, headings, body text);
//  - lunr with MkDocs's title boost;
//  - Pagefind with its defaults: its indexer (the pinned npm package's binary) reads each page
//    as HTML (headings as headings, code as code), and its own browser script, pagefind.js,
//    answers the queries from the files it wrote, read from disk (no network).
// Pages are indexed whole, not split into sections as sites do, to match dochub's hits.
//
// node peers.mjs CONTENT_DIR QUERIES_JSON
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import lunr from 'lunr';
import MiniSearch from 'minisearch';
import * as pagefindIndexer from 'pagefind';

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

const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// A page as a docs site would serve it, enough for Pagefind to weigh it as it does a real
// one: the title as <title> and <h1> (unless the body opens with its own), headings as
// <h1>..<h6>, fenced code as <pre>, raw HTML blocks as they are, other text as paragraphs
// with link targets and code ticks dropped.
function toHtml(title, body) {
  const out = [];
  let para = [];
  const flush = () => {
    if (para.length) out.push(`<p>${para.join(' ')}</p>`);
    para = [];
  };
  const inline = (s) => escapeHtml(s.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, ''));
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      flush();
      const code = [];
      while (++i < lines.length && !lines[i].trim().startsWith(fence[1])) code.push(lines[i]);
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const n = heading[1].length;
      out.push(`<h${n}>${inline(heading[2])}</h${n}>`);
    } else if (/^\s*$/.test(line)) {
      flush();
    } else if (/^\s*</.test(line) && para.length === 0) {
      // A raw HTML block runs to the next blank line.
      const block = [line];
      while (i + 1 < lines.length && !/^\s*$/.test(lines[i + 1])) block.push(lines[++i]);
      out.push(block.join('\n'));
    } else {
      para.push(inline(line.replace(/^\s*([-*+]|\d+\.)\s+/, '')));
    }
  }
  flush();
  const h1 = out.find((l) => !l.startsWith('<p>') && l !== '')?.startsWith('<h1>');
  const head = h1 ? '' : `<h1>${escapeHtml(title)}</h1>`;
  return `<!doctype html><html lang="en"><head><title>${escapeHtml(title)}</title></head><body>${head}${out.join('\n')}</body></html>`;
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
      const text = fs.readFileSync(path.join(sdir, file), 'utf8');
      docs.push({ id, ...parse(text) });
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

// Pagefind: index with the npm package's binary, write the bundle to a temporary folder,
// then load the bundle's own pagefind.js there. Its fetches of the bundle's files are
// answered from disk (Node's fetch has no file: URLs).
const bundle = fs.mkdtempSync(path.join(os.tmpdir(), 'pagefind-'));
let pagefind;
try {
  const { index, errors } = await pagefindIndexer.createIndex({ forceLanguage: 'en' });
  if (!index) throw new Error(`pagefind: ${errors.join('; ')}`);
  for (const d of docs) {
    const added = await index.addHTMLFile({ url: `/${d.id}/`, content: toHtml(d.title, d.text) });
    if (added.errors.length) throw new Error(`pagefind: ${d.id}: ${added.errors.join('; ')}`);
  }
  const written = await index.writeFiles({ outputPath: bundle });
  if (written.errors.length) throw new Error(`pagefind: ${written.errors.join('; ')}`);
  await pagefindIndexer.close();
  const nodeFetch = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    const u = new URL(url instanceof Request ? url.url : String(url));
    if (u.protocol !== 'file:') return nodeFetch(url, init);
    try {
      return new Response(fs.readFileSync(fileURLToPath(u)));
    } catch {
      return new Response(null, { status: 404 });
    }
  };
  // pagefind.js is an ES module; as a .mjs it loads from its folder, its base path.
  const script = path.join(bundle, 'pagefind.mjs');
  fs.copyFileSync(path.join(bundle, 'pagefind.js'), script);
  pagefind = await import(pathToFileURL(script).href);
  await pagefind.options({ basePath: pathToFileURL(bundle).href + '/', baseUrl: '/' });
  await pagefind.init();
} catch (e) {
  fs.rmSync(bundle, { recursive: true, force: true });
  throw e;
}

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
  const found = await pagefind.search(q);
  const top = await Promise.all(found.results.slice(0, TOP).map((r) => r.data()));
  const pf = top.map((d) => d.url.replace(/^\/|\/$/g, ''));
  console.log(JSON.stringify({ query: q, minisearch, lunr: hits, pagefind: pf }));
}
fs.rmSync(bundle, { recursive: true, force: true });
console.error(`peers: ${docs.length} pages indexed`);

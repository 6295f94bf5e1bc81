// Scores the engines' answers against the judged pages of a queries file: per engine
// success@5 (share of queries with an answering page in the top 5) and MRR@10 (mean of
// 1/rank of the first answering page in the top 10, else 0), then each query's first
// answering rank per engine, then dochub's excerpts in the top 10 that show markdown or HTML
// syntax. A page answers when its id (the path's last segment, in any version) is among the
// query's answers.
//
// node score.mjs QUERIES_JSON DOCHUB_JSONL PEERS_JSONL
//   DOCHUB_JSONL: the lines of `cargo run --example search_queries`;
//   PEERS_JSONL: the lines of peers.mjs.
import fs from 'node:fs';

const [queriesFile, dochubFile, peersFile] = process.argv.slice(2);
if (!queriesFile || !dochubFile || !peersFile) {
  console.error('usage: node score.mjs QUERIES_JSON DOCHUB_JSONL PEERS_JSONL');
  process.exit(2);
}

const lines = (file) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l));
const byQuery = (rows) => new Map(rows.map((r) => [r.query, r]));

const judged = JSON.parse(fs.readFileSync(queriesFile, 'utf8')).filter((q) => q.answers.length > 0);
const dochub = byQuery(lines(dochubFile));
const peers = byQuery(lines(peersFile));

const engines = {
  dochub: (q) => dochub.get(q)?.paths ?? [],
  minisearch: (q) => peers.get(q)?.minisearch ?? [],
  lunr: (q) => peers.get(q)?.lunr ?? [],
  pagefind: (q) => peers.get(q)?.pagefind ?? [],
};

// 1-based rank of the first answering page within the top 10, or 0.
function firstRank(paths, answers) {
  const i = paths.slice(0, 10).findIndex((p) => answers.includes(p.split('/').pop()));
  return i + 1;
}

const ranks = judged.map((j) =>
  Object.fromEntries(Object.entries(engines).map(([e, f]) => [e, firstRank(f(j.query), j.answers)])),
);

const pad = (s, n) => String(s).padEnd(n);
const padl = (s, n) => String(s).padStart(n);
console.log(`${judged.length} judged queries\n`);
console.log(`${pad('engine', 12)}${padl('success@5', 10)}${padl('MRR@10', 9)}`);
for (const e of Object.keys(engines)) {
  const r = ranks.map((x) => x[e]);
  const success = r.filter((k) => k >= 1 && k <= 5).length / r.length;
  const mrr = r.reduce((s, k) => s + (k ? 1 / k : 0), 0) / r.length;
  console.log(`${pad(e, 12)}${padl(success.toFixed(3), 10)}${padl(mrr.toFixed(3), 9)}`);
}

const width = Math.max(5, ...judged.map((j) => j.query.length)) + 2;
console.log(`\nfirst answering rank (- = none in the top 10; dochub hits = its result count)`);
console.log(`${pad('query', width)}${Object.keys(engines).map((e) => padl(e, 11)).join('')}${padl('dochub hits', 13)}`);
judged.forEach((j, i) => {
  const cells = Object.keys(engines).map((e) => padl(ranks[i][e] || '-', 11));
  const d = dochub.get(j.query);
  const hits = d?.error ? `error: ${d.error}` : (d?.paths?.length ?? 'missing');
  console.log(`${pad(j.query, width)}${cells.join('')}${padl(hits, 13)}`);
});

// What a plain-text excerpt should never show: fence markers, mdBook/Hugo directives, TOML
// frontmatter fences, link targets, HTML tags. Code that a page shows as text (a SUMMARY.md
// example, a `<name>` placeholder) matches too: read the list, it is not a score.
const LEAKS = /```|~~~|\{\{[#%]|\+\+\+|\]\(|<\/?[a-z][a-z0-9-]*(\s[^>]*)?>/;
const leaks = [];
for (const [query, r] of dochub) {
  (r.excerpts ?? []).slice(0, 10).forEach((e, i) => {
    if (LEAKS.test(e)) leaks.push(`  ${query} #${i + 1} ${r.paths[i]}: ${e}`);
  });
}
console.log(`\ndochub excerpts in the top 10 that look like markup (or code showing it): ${leaks.length}`);
for (const l of leaks) console.log(l);

const disagree = [...dochub.values()].filter((r) => r.index_agrees === false).map((r) => r.query);
console.log(`\ndochub index and live search disagreed on ${disagree.length} queries${disagree.length ? ': ' + disagree.join(', ') : ''}`);

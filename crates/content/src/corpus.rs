//! A deterministic content tree of any size, for benchmarks and tests (feature `corpus`):
//! `projects` × `subprojects` × `pages` pages of about `page_bytes` each, with frontmatter
//! (title, summary, references to other subprojects), headings, lists, code and prose drawn
//! from a fixed vocabulary with some non-ASCII words. The same spec always writes the same
//! bytes.
//!
//! Words with known frequencies make good queries: [`RARE_TERM`] is in one page of
//! [`RARE_EVERY`], [`COMMON_TERM`] in nearly every page.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let spec = dochub_content::corpus::Spec { projects: 2, subprojects: 2, pages: 3, page_bytes: 2000 };
//! let written = dochub_content::corpus::generate(dir.path(), &spec).unwrap();
//! assert_eq!(written.pages, 12);
//! let root = dochub_content::ContentRoot::open(dir.path()).unwrap();
//! assert_eq!(root.all_page_paths().unwrap().len(), 12);
//! ```

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// A word in one page of [`RARE_EVERY`].
pub const RARE_TERM: &str = "quasar";
/// How rare [`RARE_TERM`] is.
pub const RARE_EVERY: usize = 250;
/// A word in nearly every page.
pub const COMMON_TERM: &str = "service";

/// The shape of a generated tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Number of projects.
    pub projects: usize,
    /// Subprojects per project.
    pub subprojects: usize,
    /// Pages per subproject.
    pub pages: usize,
    /// Approximate size of a page in bytes.
    pub page_bytes: usize,
}

/// What [`generate`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Pages written.
    pub pages: usize,
    /// Bytes of pages written.
    pub bytes: u64,
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "with",
    "on",
    "request",
    "response",
    "component",
    "service",
    "manifest",
    "router",
    "page",
    "index",
    "search",
    "token",
    "cache",
    "build",
    "deploy",
    "store",
    "value",
    "key",
    "query",
    "result",
    "error",
    "handler",
    "stream",
    "buffer",
    "config",
    "variable",
    "host",
    "guest",
    "module",
    "runtime",
    "memory",
    "table",
    "thread",
    "queue",
    "message",
    "inbox",
    "machine",
    "latency",
    "throughput",
    "header",
    "body",
    "route",
    "path",
    "file",
    "folder",
    "tree",
    "node",
    "edge",
    "graph",
    "schema",
    "field",
    "record",
    "column",
    "driver",
    "client",
    "server",
    "socket",
    "port",
    "address",
    "timeout",
    "retry",
    "backoff",
    "limit",
    "quota",
    "metric",
    "trace",
    "log",
    "event",
    "signal",
    "state",
    "session",
    "cookie",
    "policy",
    "role",
    "user",
    "group",
    "account",
    "billing",
    "invoice",
    "order",
    "payment",
    "catalog",
    "product",
    "price",
    "stock",
    "warehouse",
    "shipment",
    "carrier",
    "label",
    "report",
    "daily",
    "weekly",
    "release",
    "version",
    "upgrade",
    "migration",
    "rollback",
    "snapshot",
    "backup",
    "restore",
    "replica",
    "shard",
    "partition",
    "leader",
    "follower",
    "quorum",
    "consensus",
    "ledger",
    "journal",
    "über",
    "straße",
    "café",
    "naïve",
    "Ünïcødé",
    "日本語",
    "東京",
    "σοφία",
    "Ελλάδα",
    "ключ",
    "données",
    "größe",
    "año",
    "ação",
    "façade",
];

/// A small deterministic generator (SplitMix64): the corpus must not depend on a crate's
/// choice of algorithm across versions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn word(&mut self) -> &'static str {
        // Skewed towards the first words, as prose is.
        let a = self.below(WORDS.len());
        let b = self.below(WORDS.len());
        WORDS[a.min(b)]
    }
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let n = 6 + rng.below(12);
    for i in 0..n {
        let w = rng.word();
        if i == 0 {
            let mut chars = w.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push(' ');
            out.push_str(w);
        }
    }
    out.push_str(". ");
}

fn page(spec: &Spec, number: usize, p: usize, s: usize, k: usize) -> String {
    let mut rng = Rng(number as u64 * 7919 + 17);
    let mut out = String::with_capacity(spec.page_bytes + 512);
    let topic = [rng.word(), rng.word()];
    let _ = writeln!(out, "---");
    let _ = writeln!(
        out,
        "title: \"Page {k} of s{s:02}: {} {}\"",
        topic[0], topic[1]
    );
    let _ = writeln!(
        out,
        "summary: How the {} {} works in p{p:02}/s{s:02}.",
        topic[0], topic[1]
    );
    let _ = writeln!(out, "references:");
    let _ = writeln!(
        out,
        "  - target: p{:02}/s{:02}",
        (p + 1) % spec.projects.max(1),
        s
    );
    let _ = writeln!(out, "    type: depends_on");
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "# Page {k}: {} {}\n", topic[0], topic[1]);
    let mut section = 0;
    while out.len() < spec.page_bytes {
        section += 1;
        let _ = writeln!(out, "## Section {section}: {}\n", rng.word());
        for _ in 0..3 {
            sentence(&mut rng, &mut out);
        }
        out.push_str("\n\n");
        if section % 2 == 0 {
            let _ = writeln!(
                out,
                "- the {} {}\n- a {} {}\n",
                rng.word(),
                rng.word(),
                rng.word(),
                rng.word()
            );
        }
        if section % 3 == 0 {
            let _ = writeln!(
                out,
                "```toml\n[{}]\n{} = \"{}\"\n```\n",
                rng.word(),
                rng.word(),
                rng.word()
            );
        }
        let _ = writeln!(
            out,
            "### Notes\n\nThe {COMMON_TERM} {} the {}.\n",
            rng.word(),
            rng.word()
        );
    }
    if number % RARE_EVERY == RARE_EVERY / 2 {
        let _ = writeln!(out, "A {RARE_TERM} appears here once.");
    }
    out
}

/// Writes the tree into `dir` (created if needed): `p00/_project.yaml`,
/// `p00/s00/_subproject.yaml`, `p00/s00/page-0000.md`, ...
pub fn generate(dir: &Path, spec: &Spec) -> std::io::Result<Written> {
    let mut written = Written { pages: 0, bytes: 0 };
    for p in 0..spec.projects {
        let pdir = dir.join(format!("p{p:02}"));
        fs::create_dir_all(&pdir)?;
        fs::write(
            pdir.join("_project.yaml"),
            format!("name: Project {p}\ndescription: Generated project number {p}\n"),
        )?;
        for s in 0..spec.subprojects {
            let sdir = pdir.join(format!("s{s:02}"));
            fs::create_dir_all(&sdir)?;
            fs::write(
                sdir.join("_subproject.yaml"),
                format!(
                    "name: Subproject {p}.{s}\ndescription: Generated subproject\nschema_coverage:\n  purpose: true\n  status: {}\n",
                    s % 2 == 0
                ),
            )?;
            for k in 0..spec.pages {
                let text = page(spec, written.pages, p, s, k);
                fs::write(sdir.join(format!("page-{k:04}.md")), &text)?;
                written.pages += 1;
                written.bytes += text.len() as u64;
            }
        }
    }
    Ok(written)
}

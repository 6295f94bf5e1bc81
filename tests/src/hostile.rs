//! Content trees written by a careless or hostile author: one bad file each, for the tests
//! that every other route still answers, and for the benchmark that measures the worst file
//! under the limits (`examples/hostile_bench.rs`).

use std::path::Path;

/// One hostile file: where it goes in a tree and what it holds.
pub struct HostileFile {
    /// A short name for reports.
    pub name: &'static str,
    /// Its path under the content root.
    pub path: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A page of `body` with a plain frontmatter block.
fn page(title: &str, body: &str) -> Vec<u8> {
    format!("---\ntitle: {title}\nsummary: {title}\n---\n{body}").into_bytes()
}

/// Frontmatter nested `depth` flow sequences deep: YAML parsing costs grow with its square.
pub fn deep_yaml(depth: usize) -> String {
    format!(
        "title: deep\nx: {}1{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// 20 KB of YAML that expands to 16 million values: `b` names `a`'s 4,000 items 4,000 times.
pub fn alias_bomb() -> String {
    let items = vec!["x"; 4000].join(", ");
    let refs = vec!["*a"; 4000].join(", ");
    format!("name: Bomb\na: &a [{items}]\nb: [{refs}]\n")
}

/// The hostile files the issue found, each over a limit; the pages among them are in project
/// `hostile`, subproject `bad`, beside the good page `hostile/bad/fine`.
pub fn over_the_limits() -> Vec<HostileFile> {
    vec![
        HostileFile {
            name: "frontmatter 30,000 deep",
            path: "hostile/bad/deep.md",
            bytes: format!("---\n{}---\n# Deep\n", deep_yaml(30_000)).into_bytes(),
        },
        HostileFile {
            name: "alias expansion in frontmatter",
            path: "hostile/bad/aliases.md",
            bytes: format!("---\n{}---\n# Aliases\n", alias_bomb()).into_bytes(),
        },
        HostileFile {
            name: "alias expansion in _project.yaml",
            path: "bomb/_project.yaml",
            bytes: alias_bomb().into_bytes(),
        },
        HostileFile {
            name: "a 20 MB page",
            path: "hostile/bad/huge.md",
            bytes: page("Huge", &"All work and no play. ".repeat(1_000_000)),
        },
    ]
}

/// The costliest pages under the limits: the page limit's worth each of links, of a list nested as deep as the
/// bytes allow, and of a table as wide; with the frontmatter at the YAML limits.
pub fn at_the_limits() -> Vec<HostileFile> {
    let max = dochub_content::limits::MAX_PAGE_BYTES as usize - 200;
    let links = "[a](b) ".repeat(max / 7);
    let nested: String = "> ".repeat(max / 2 - 2) + "x\n";
    let list: String = {
        let mut out = String::new();
        let mut indent = 0;
        while out.len() + indent + 4 < max {
            out.push_str(&" ".repeat(indent));
            out.push_str("- x\n");
            indent += 2;
        }
        out
    };
    let columns = max / 13;
    let table = format!(
        "{}|\n{}|\n{}|\n",
        "| h ".repeat(columns),
        "|---".repeat(columns),
        "| c ".repeat(columns)
    );
    let aliases = {
        // 98 aliases of a 99-value anchor: 9,703 values, just under the limit.
        let items = vec!["x"; 98].join(", ");
        let refs = vec!["*a"; 98].join(", ");
        format!("title: Aliases\na: &a [{items}]\nb: [{refs}]\n")
    };
    vec![
        HostileFile {
            name: "a page of links at the limit",
            path: "limits/pages/links.md",
            bytes: page("Links", &links),
        },
        HostileFile {
            name: "quotes nested as deep as the limit allows",
            path: "limits/pages/quotes.md",
            bytes: page("Quotes", &nested),
        },
        HostileFile {
            name: "a list nested as deep as the limit allows",
            path: "limits/pages/list.md",
            bytes: page("List", &list),
        },
        HostileFile {
            name: "a table as wide as the limit allows",
            path: "limits/pages/table.md",
            bytes: page("Table", &table),
        },
        HostileFile {
            name: "frontmatter 31 deep",
            path: "limits/pages/deep.md",
            bytes: format!("---\n{}---\n# Deep\n", deep_yaml(30)).into_bytes(),
        },
        HostileFile {
            name: "frontmatter of 9,703 values through aliases",
            path: "limits/pages/aliases.md",
            bytes: format!("---\n{aliases}---\n# Aliases\n").into_bytes(),
        },
    ]
}

/// Writes `files` under `root`, with the good neighbours each hostile file sits beside.
pub fn write_tree(root: &Path, files: &[HostileFile]) -> std::io::Result<()> {
    let write = |rel: &str, bytes: &[u8]| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
        std::fs::write(path, bytes)
    };
    for (project, sub) in [("hostile", "bad"), ("limits", "pages"), ("bomb", "s")] {
        write(&format!("{project}/{sub}/_subproject.yaml"), b"name: S\n")?;
        write(
            &format!("{project}/{sub}/fine.md"),
            &page("Fine", "A good page beside the bad ones.\n"),
        )?;
    }
    write("good/docs/_subproject.yaml", b"name: Docs\n")?;
    write(
        "good/docs/intro.md",
        &page("Intro", "Searchable quokka text.\n"),
    )?;
    for file in files {
        write(file.path, &file.bytes)?;
    }
    Ok(())
}

//! Highlighting benchmark (not a test): what `dochub build` spends on code blocks.
//!
//! Loads the grammars once, then highlights every fenced code block of every page under a
//! content folder, and prints the load time, the number of blocks highlighted (and left plain),
//! the total time and the time per page, plus the HTML's size beside the code's.
//!
//! ```sh
//! cargo run --release -p dochub-highlight --example highlight_bench -- content
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

fn pages(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            pages(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "content".into());
    let mut files = Vec::new();
    pages(Path::new(&root), &mut files);
    let start = Instant::now();
    let highlighter = dochub_highlight::Highlighter::new();
    let load = start.elapsed();
    let (mut highlighted, mut plain, mut code_bytes, mut html_bytes) = (0, 0, 0, 0);
    let mut spent = Duration::ZERO;
    for file in &files {
        let raw = std::fs::read(file).expect("readable page");
        let body = dochub_content::parse_page("page", &raw).body;
        for block in dochub_content::code_blocks(&body) {
            let t = Instant::now();
            let html = highlighter.highlight(&block.language, &block.code);
            spent += t.elapsed();
            match html {
                Some(html) => {
                    highlighted += 1;
                    code_bytes += block.code.len();
                    html_bytes += html.len();
                }
                None => plain += 1,
            }
        }
    }
    println!("{} pages under {root}", files.len());
    println!("grammars loaded in {:.1} ms", load.as_secs_f64() * 1e3);
    println!(
        "{highlighted} blocks highlighted, {plain} left plain, in {:.1} ms ({:.3} ms a page)",
        spent.as_secs_f64() * 1e3,
        spent.as_secs_f64() * 1e3 / files.len().max(1) as f64
    );
    println!(
        "{code_bytes} bytes of code became {html_bytes} bytes of HTML ({:.1}x)",
        html_bytes as f64 / code_bytes.max(1) as f64
    );
}

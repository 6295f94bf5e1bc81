//! Native timings (not a test): rendering a 20 KB page, alone and as the whole `/docs` request
//! through [`dochub_app::docs::handle`] on a temporary content tree. Compare with
//! `benches/docs.sh`, which times the same page through `docs.wasm` under the host.
//!
//! Run with `cargo bench --workspace --bench docs`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use dochub_app::docs::{SiteConfig, handle};
use dochub_http::Request;
use dochub_http::auth::AuthConfig;
use dochub_render::{Location, Nav, document_page, render_markdown};

const RUNS: usize = 300;

/// About 20 KB of typical markdown: frontmatter, headings, prose with inline markup and links,
/// nested and task lists, tables and fenced code. The docs benchmarks share it.
const PAGE_20K: &str = include_str!("page-20k.md");

fn p50(mut f: impl FnMut()) -> Duration {
    for _ in 0..20 {
        f();
    }
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn main() -> std::io::Result<()> {
    let md = PAGE_20K.to_string();
    // The floor: pulldown-cmark with the same options and no rewriting, ids or outline.
    let bare = p50(|| {
        let mut html = String::new();
        let parser = pulldown_cmark::Parser::new_ext(black_box(&md), dochub_render::options());
        pulldown_cmark::html::push_html(&mut html, parser);
        black_box(html);
    });
    let markdown = p50(|| {
        black_box(render_markdown(black_box(&md), &["p", "s"]));
    });
    let rendered = render_markdown(&md, &["p", "s"]);
    let layout = p50(|| {
        black_box(document_page(&Nav::default(), &Location::default(), "T", "S", &rendered).ok());
    });

    let content = tempfile::tempdir()?;
    std::fs::create_dir_all(content.path().join("p/s"))?;
    std::fs::write(content.path().join("p/s/big.md"), &md)?;
    std::fs::write(content.path().join("p/s/other.md"), "# Other\n")?;
    let config = SiteConfig {
        source: dochub_index::Source {
            content_dir: content.path().to_path_buf(),
            build: dochub_index::build::BuildMode::Off,
            memo: None,
        },
        auth: AuthConfig::new("development", ""),
        edit_url: String::new(),
    };
    let request = |query| Request {
        method: "GET",
        path: "/p/s/big",
        query,
        headers: &[],
    };
    let site = p50(|| {
        black_box(handle(&config, &request("")));
    });
    let raw = p50(|| {
        black_box(handle(&config, &request("format=raw")));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("{} bytes of markdown, p50 of {RUNS} runs:", md.len());
    println!("  pulldown-cmark alone:      {:.3} ms", ms(bare));
    println!("  render_markdown:           {:.3} ms", ms(markdown));
    println!("  document_page (layout):    {:.3} ms", ms(layout));
    println!("  site::handle, rendered:    {:.3} ms", ms(site));
    println!("  site::handle, ?format=raw: {:.3} ms", ms(raw));
    Ok(())
}

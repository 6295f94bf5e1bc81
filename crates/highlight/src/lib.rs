//! Syntax highlighting of fenced code blocks, done by `dochub build`, natively.
//!
//! Why at build time and not in the docs component: the grammars are Sublime Text syntaxes run
//! by a regex engine (syntect with fancy-regex, which does build for `wasm32-wasip2`), but a
//! Spin component starts afresh for every request, so every page with code would pay for
//! loading the grammars and compiling their regexes, tens of milliseconds, and the component
//! would grow past 2 MB. Highlighted once at build time, a page costs one more read of the
//! prebuilt index; a page changed since the build shows its changed blocks plain until the next
//! build (see `dochub-index`).
//!
//! The output is the inside of a `<code>` element: the code, HTML-escaped, with tokens in
//! `<span class="hl-X">`, one class per kind of token, which the site's stylesheet colours for
//! light and for dark mode:
//!
//! | class | tokens |
//! |---|---|
//! | `hl-k` | keywords, storage (`fn`, `let`, `def`, `SELECT`) |
//! | `hl-s` | strings |
//! | `hl-c` | comments |
//! | `hl-n` | numbers, constants, attribute names |
//! | `hl-f` | function names, diff ranges |
//! | `hl-t` | type and class names |
//! | `hl-g` | tags (HTML elements, YAML and TOML keys) |
//! | `hl-i` / `hl-d` | inserted / deleted lines of a diff |
//!
//! ```
//! let highlighter = dochub_highlight::Highlighter::new();
//! let html = highlighter.highlight("rust", "fn main() {}\n").unwrap();
//! assert!(html.starts_with(r#"<span class="hl-k">fn</span> <span class="hl-f">main</span>"#));
//! assert!(highlighter.highlight("<script>", "x").is_none());
//! ```

use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use syntect::highlighting::{
    Color, HighlightIterator, HighlightState, Highlighter as ThemeHighlighter, ScopeSelectors,
    StyleModifier, Theme, ThemeItem,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

/// The classes, in the order of [`KINDS`]; index 0 is "no class" (plain text).
const CLASSES: [&str; 10] = [
    "", "hl-k", "hl-s", "hl-c", "hl-n", "hl-f", "hl-t", "hl-g", "hl-i", "hl-d",
];

/// Which scopes get which class (an index into [`CLASSES`]). More specific selectors win, as
/// in any TextMate theme.
const KINDS: [(&str, u8); 22] = [
    ("keyword, storage", 1),
    ("keyword.operator, punctuation", 0),
    ("string, string punctuation.definition.string", 2),
    ("constant.character.escape", 4),
    ("comment, comment punctuation", 3),
    (
        "constant.numeric, constant.language, constant.character, constant.other",
        4,
    ),
    ("support.constant, variable.language", 4),
    ("entity.other.attribute-name", 4),
    (
        "entity.name.function, support.function, variable.function",
        5,
    ),
    ("meta.diff.range, meta.diff.header, meta.diff.index", 5),
    (
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum",
        6,
    ),
    (
        "entity.name.trait, entity.name.interface, entity.name.union, entity.name.impl",
        6,
    ),
    (
        "support.type, support.class, storage.type.primitive, storage.type.numeric",
        6,
    ),
    ("entity.other.inherited-class", 6),
    ("entity.name.tag", 7),
    ("meta.mapping.key string, meta.tag.key", 7),
    ("markup.inserted, markup.inserted punctuation", 8),
    ("markup.deleted, markup.deleted punctuation", 9),
    ("markup.heading", 5),
    ("markup.bold, markup.italic", 0),
    ("variable.parameter", 0),
    ("entity.name.section", 5),
];

/// The longest fence language name looked up; anything longer is plain code.
pub const MAX_LANGUAGE_LEN: usize = 64;
/// The largest block highlighted; a larger one is shown plain. Grammars are regexes run line by
/// line, some backtracking: a 40 KB line of shell took a second to highlight, and a build must
/// stay bounded whatever its pages hold.
pub const MAX_CODE_BYTES: usize = 64 * 1024;
/// The longest line of a block highlighted; a block with a longer line is shown plain.
pub const MAX_LINE_BYTES: usize = 4 * 1024;

/// How long one block may take to highlight before it is shown plain. syntect can loop
/// forever inside one line (a grammar whose rules hand a position back to each other without
/// consuming it: the `JavaScript` grammar did on a comment in the Cargo book), and that cannot
/// be interrupted: the block is given up and its thread left behind.
pub const BLOCK_DEADLINE: Duration = Duration::from_secs(2);

/// The grammars and the scope-to-class mapping, loaded once per build.
pub struct Highlighter {
    grammars: Arc<Grammars>,
    /// The thread blocks are highlighted on, started at the first block and replaced when it
    /// misses [`BLOCK_DEADLINE`].
    worker: Mutex<Option<Worker>>,
    given_up: AtomicUsize,
}

struct Grammars {
    syntaxes: SyntaxSet,
    theme: Theme,
}

/// A block to highlight: the grammar's index in the set, and the code.
type Job = (usize, String);

struct Worker {
    jobs: Sender<Job>,
    done: Receiver<Option<String>>,
}

impl Worker {
    fn start(grammars: Arc<Grammars>) -> Worker {
        let (jobs, job_queue) = channel::<Job>();
        let (done_tx, done) = channel();
        std::thread::spawn(move || {
            for (syntax, code) in job_queue {
                let syntax = &grammars.syntaxes.syntaxes()[syntax];
                // A grammar whose regex the engine cannot compile panics in syntect; bat's
                // set is written for another engine, so one page's fence must not end the
                // whole build.
                let html = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    grammars.spans(syntax, &code)
                }))
                .ok()
                .flatten();
                if done_tx.send(html).is_err() {
                    return;
                }
            }
        });
        Worker { jobs, done }
    }
}

impl Default for Highlighter {
    fn default() -> Self {
        Highlighter::new()
    }
}

impl Highlighter {
    /// Loads the grammars (bat's set: syntect's defaults and more).
    pub fn new() -> Highlighter {
        let mut theme = Theme::default();
        for (selectors, class) in KINDS {
            theme.scopes.push(ThemeItem {
                scope: ScopeSelectors::from_str(selectors).expect("the selectors above parse"),
                // The class rides in the foreground colour; no colour is ever written out.
                style: StyleModifier {
                    foreground: Some(Color {
                        r: class,
                        g: 0,
                        b: 0,
                        a: 255,
                    }),
                    background: None,
                    font_style: None,
                },
            });
        }
        theme.settings.foreground = Some(Color {
            r: 0,
            g: 0,
            b: 0,
            a: 255,
        });
        Highlighter {
            grammars: Arc::new(Grammars {
                syntaxes: two_face::syntax::extra_newlines(),
                theme,
            }),
            worker: Mutex::new(None),
            given_up: AtomicUsize::new(0),
        }
    }

    /// The grammar a fence's language name (`rust`, `rs`, `sh`, `yml`, `ts`, ...) names, if
    /// any: by token (a name or file extension), case-insensitively.
    pub fn syntax(&self, language: &str) -> Option<&SyntaxReference> {
        self.grammars.syntax(language)
    }

    /// How many blocks missed [`BLOCK_DEADLINE`] and were shown plain.
    pub fn given_up(&self) -> usize {
        self.given_up.load(Ordering::Relaxed)
    }

    /// `code` highlighted as `language`: the inside of its `<code>` element. `None` when no
    /// grammar knows the language, the block is over [`MAX_CODE_BYTES`] or has a line over
    /// [`MAX_LINE_BYTES`], the grammar fails on it or it takes longer than
    /// [`BLOCK_DEADLINE`]: the block is then shown plain.
    pub fn highlight(&self, language: &str, code: &str) -> Option<String> {
        let syntax = self.syntax(language)?;
        if code.len() > MAX_CODE_BYTES || code.lines().any(|line| line.len() > MAX_LINE_BYTES) {
            return None;
        }
        let index = self
            .grammars
            .syntaxes
            .syntaxes()
            .iter()
            .position(|s| std::ptr::eq(s, syntax))?;
        self.run(index, code)
    }

    /// Highlights `code` with the grammar at `syntax` in the set on the worker thread, within
    /// [`BLOCK_DEADLINE`].
    fn run(&self, syntax: usize, code: &str) -> Option<String> {
        let mut worker = self.worker.lock().unwrap_or_else(|e| e.into_inner());
        let running = worker.get_or_insert_with(|| Worker::start(Arc::clone(&self.grammars)));
        running.jobs.send((syntax, code.to_owned())).ok()?;
        match running.done.recv_timeout(BLOCK_DEADLINE) {
            Ok(html) => html,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                // Stuck (or gone): the next block gets a new thread.
                *worker = None;
                self.given_up.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

impl Grammars {
    fn syntax(&self, language: &str) -> Option<&SyntaxReference> {
        if language.is_empty() || language.len() > MAX_LANGUAGE_LEN {
            return None;
        }
        let language = language.to_ascii_lowercase();
        let language = match language.as_str() {
            // Names people write on fences that no grammar lists as a token.
            "shell" | "console" | "shell-session" | "zsh" => "bash",
            "jsonc" | "json5" => "json",
            "golang" => "go",
            "py3" | "python3" => "python",
            "patch" => "diff",
            other => other,
        };
        // Hidden grammars are parts of others (`commands-builtin-shell-bash`), not languages.
        self.syntaxes
            .find_syntax_by_token(language)
            .filter(|s| s.name != "Plain Text" && !s.hidden)
    }

    fn spans(&self, syntax: &SyntaxReference, code: &str) -> Option<String> {
        let theme = ThemeHighlighter::new(&self.theme);
        let mut parse = ParseState::new(syntax);
        let mut state = HighlightState::new(&theme, ScopeStack::new());
        let mut html = String::with_capacity(code.len() * 2);
        let mut open: u8 = 0;
        // Whitespace waits for the next token: inside its span when it has the open class,
        // else between spans (so no span runs into the next line's indent).
        let mut blank = String::new();
        for line in LinesWithEndings::from(code) {
            let ops = parse.parse_line(line, &self.syntaxes).ok()?;
            for (style, text) in HighlightIterator::new(&mut state, &ops, line, &theme) {
                if text.trim().is_empty() {
                    blank.push_str(text);
                    continue;
                }
                let class = style.foreground.r.min(CLASSES.len() as u8 - 1);
                if class != open {
                    if open != 0 {
                        html.push_str("</span>");
                    }
                    escape_into(&mut html, &blank);
                    if class != 0 {
                        let _ = write!(html, r#"<span class="{}">"#, CLASSES[class as usize]);
                    }
                    open = class;
                } else {
                    escape_into(&mut html, &blank);
                }
                blank.clear();
                escape_into(&mut html, text);
            }
        }
        if open != 0 {
            html.push_str("</span>");
        }
        escape_into(&mut html, &blank);
        Some(html)
    }
}

/// Escapes element text as the markdown renderer does (quotes need no escaping there), so a
/// highlighted block's text is byte for byte the plain block's.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of `html` with the tags removed and entities decoded: the code as written.
    fn text_of(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    }

    const SAMPLES: [(&str, &str); 14] = [
        (
            "rust",
            "fn main() {\n    let x: u32 = 42; // answer\n    println!(\"{x}\");\n}\n",
        ),
        (
            "toml",
            "[component.docs]\nsource = \"docs.wasm\" # built\nreplicas = 3\n",
        ),
        (
            "json",
            "{\"name\": \"dochub\", \"pages\": 3, \"ok\": true}\n",
        ),
        ("yaml", "title: Install\norder: 2 # first\n"),
        ("sh", "# build it\ncargo build --release && echo \"done\"\n"),
        (
            "javascript",
            "const x = () => 42; // answer\nfunction f(a) { return 'a'; }\n",
        ),
        (
            "ts",
            "interface A { b: number }\nconst x: string = \"y\";\n",
        ),
        ("python", "def f(x):\n    return x + 1  # plus\n"),
        ("go", "package main\nfunc main() { fmt.Println(\"hi\") }\n"),
        (
            "html",
            "<p class=\"x\">Hi</p>\n<script>let a = 1;</script>\n<style>p { color: red }</style>\n",
        ),
        ("css", "p { color: red; margin: 0 }\n/* note */\n"),
        ("sql", "SELECT name FROM pages WHERE id = 1; -- one\n"),
        ("diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"),
        ("bash", "for f in *.md; do echo \"$f\"; done\n"),
    ];

    /// A comment after a value, then one holding a backtick, loops syntect's `JavaScript`
    /// grammar (what `js` fences get: bat's newer one needs a regex fancy-regex cannot
    /// compile) forever inside the last line.
    const LOOPS_JAVASCRIPT: &str = " /*\n */\n \"k\": true\n /* `-`";

    #[test]
    fn a_block_that_loops_its_grammar_is_given_up_and_the_next_is_highlighted() {
        let h = Highlighter::new();
        let start = std::time::Instant::now();
        assert_eq!(h.highlight("js", LOOPS_JAVASCRIPT), None);
        assert!(start.elapsed() >= BLOCK_DEADLINE);
        assert_eq!(h.given_up(), 1);
        // A new thread takes the next blocks.
        assert!(h.highlight("rust", "fn main() {}\n").is_some());
        assert!(h.highlight("js", "let x = 1; /* `-` */\n").is_some());
        assert_eq!(h.given_up(), 1);
    }

    #[test]
    fn every_listed_language_is_highlighted_and_keeps_its_text() {
        let h = Highlighter::new();
        for (language, code) in SAMPLES {
            let html = h
                .highlight(language, code)
                .unwrap_or_else(|| panic!("{language} has a grammar"));
            assert_eq!(text_of(&html), code, "{language}: {html}");
            let classes: std::collections::BTreeSet<&str> = CLASSES[1..]
                .iter()
                .copied()
                .filter(|c| html.contains(&format!(r#"class="{c}""#)))
                .collect();
            assert!(classes.len() >= 2, "{language}: {classes:?} in {html}");
        }
    }

    #[test]
    fn tokens_get_the_classes_the_stylesheet_expects() {
        let h = Highlighter::new();
        let rust = h.highlight("rs", SAMPLES[0].1).unwrap();
        assert!(rust.contains(r#"<span class="hl-k">fn</span>"#), "{rust}");
        assert!(rust.contains(r#"<span class="hl-n">42</span>"#), "{rust}");
        assert!(rust.contains(r#"<span class="hl-c">// answer"#), "{rust}");
        let diff = h.highlight("diff", SAMPLES[12].1).unwrap();
        assert!(diff.contains(r#"<span class="hl-i">+new"#), "{diff}");
        assert!(diff.contains(r#"<span class="hl-d">-old"#), "{diff}");
    }

    #[test]
    fn unknown_and_hostile_languages_are_plain() {
        let h = Highlighter::new();
        let long = "r".repeat(5000);
        for language in ["", "<script>", "no-such-language", &long, "plain", "txt"] {
            assert!(h.highlight(language, "x < y").is_none(), "{language}");
        }
        // Names are matched case-insensitively, and common aliases are known.
        for language in [
            "Rust", "RS", "shell", "console", "yml", "jsonc", "py", "golang",
        ] {
            assert!(h.syntax(language).is_some(), "{language}");
        }
    }

    #[test]
    fn oversized_blocks_are_plain() {
        let h = Highlighter::new();
        let long_line = format!("echo {}\n", "a".repeat(MAX_LINE_BYTES));
        assert!(h.highlight("sh", &long_line).is_none());
        let many_lines = "let x = 1;\n".repeat(MAX_CODE_BYTES / 10);
        assert!(h.highlight("rust", &many_lines).is_none());
        assert!(
            h.highlight("rust", &many_lines[..MAX_CODE_BYTES / 2])
                .is_some()
        );
    }

    #[test]
    fn markup_in_code_is_escaped() {
        let h = Highlighter::new();
        let html = h
            .highlight("rust", "let s = \"</code><script>alert(1)</script>\";\n")
            .unwrap();
        assert!(
            !html.contains("<script>") && !html.contains("</code>"),
            "{html}"
        );
        assert!(html.contains("&lt;/code&gt;&lt;script&gt;"), "{html}");
    }
}

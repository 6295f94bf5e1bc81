//! Callouts: GitHub's alerts (`> [!NOTE]`) and the directive form of Docusaurus, Starlight
//! and VitePress (`:::tip[Title]` ... `:::`), parsed once here for the renderer, search's
//! plain text and `dochub check` alike.
//!
//! pulldown-cmark parses the alerts itself (`Options::ENABLE_GFM`). The directive form is not
//! CommonMark, so its lines are found first, then each is replaced by a paragraph of its own
//! (`:::` between blank lines) that the parser cannot merge into the text around it, and that
//! paragraph, recognised by its offset, becomes a [`Piece::CalloutStart`] or
//! [`Piece::CalloutEnd`]. The rules:
//!
//! - a directive line starts at the left margin: three or more `:`, a kind, then optionally
//!   a title, as `[Title]` or after a space (`::: tip Title`, VitePress's form); a line of
//!   colons alone closes the innermost open callout; indented lines are text, so they stay
//!   inside lists and indented code;
//! - a directive line inside a fenced or indented code block or a raw HTML block is text;
//! - an opener without its closer, a closer without an opener, and a callout of an unknown
//!   kind (`:::foo`, both of its lines) stay text (and `dochub check` says so).

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{BlockQuoteKind, Event, Options, Parser, Tag, TagEnd};

/// The markdown dialect of dochub pages, in one place: CommonMark plus tables, footnotes,
/// strikethrough, task lists, heading attributes (`# Title {#id .class}`) and GitHub's alerts
/// (`> [!NOTE]`). The directive callouts (`:::tip`) are not a parser option: parse a body
/// through [`Markdown`] to get them.
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
}

/// The kinds of callout: GitHub's five and the directive form's `info` and `danger`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CalloutKind {
    /// `note`
    Note,
    /// `tip`
    Tip,
    /// `important`
    Important,
    /// `info`
    Info,
    /// `warning`
    Warning,
    /// `caution`
    Caution,
    /// `danger`
    Danger,
}

impl CalloutKind {
    /// Every kind.
    pub const ALL: [CalloutKind; 7] = [
        CalloutKind::Note,
        CalloutKind::Tip,
        CalloutKind::Important,
        CalloutKind::Info,
        CalloutKind::Warning,
        CalloutKind::Caution,
        CalloutKind::Danger,
    ];

    /// The kind as written and as its class names it (`callout-<name>`): `note`, `tip`, ...
    pub fn name(self) -> &'static str {
        match self {
            CalloutKind::Note => "note",
            CalloutKind::Tip => "tip",
            CalloutKind::Important => "important",
            CalloutKind::Info => "info",
            CalloutKind::Warning => "warning",
            CalloutKind::Caution => "caution",
            CalloutKind::Danger => "danger",
        }
    }

    /// The title a callout shows when it has none of its own: `Note`, `Tip`, ...
    pub fn title(self) -> &'static str {
        match self {
            CalloutKind::Note => "Note",
            CalloutKind::Tip => "Tip",
            CalloutKind::Important => "Important",
            CalloutKind::Info => "Info",
            CalloutKind::Warning => "Warning",
            CalloutKind::Caution => "Caution",
            CalloutKind::Danger => "Danger",
        }
    }

    /// The kind named `name`, in any case (`NOTE`, `note`).
    ///
    /// ```
    /// use dochub_content::CalloutKind;
    /// assert_eq!(CalloutKind::from_name("Danger"), Some(CalloutKind::Danger));
    /// assert_eq!(CalloutKind::from_name("foo"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<CalloutKind> {
        CalloutKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    fn from_alert(kind: BlockQuoteKind) -> CalloutKind {
        match kind {
            BlockQuoteKind::Note => CalloutKind::Note,
            BlockQuoteKind::Tip => CalloutKind::Tip,
            BlockQuoteKind::Important => CalloutKind::Important,
            BlockQuoteKind::Warning => CalloutKind::Warning,
            BlockQuoteKind::Caution => CalloutKind::Caution,
        }
    }
}

/// One step of a parsed page body: a markdown event, or a callout's start or end. Starts and
/// ends always pair up, properly nested.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece<'a> {
    /// An ordinary markdown event (never an alert's blockquote: that is a callout).
    Event(Event<'a>),
    /// A callout opens.
    CalloutStart {
        /// Its kind.
        kind: CalloutKind,
        /// The title its author wrote, as plain text (`None`: show [`CalloutKind::title`]).
        title: Option<&'a str>,
    },
    /// The innermost open callout closes.
    CalloutEnd(CalloutKind),
}

/// A page body ready to parse in dochub's dialect, callouts included.
///
/// ```
/// use dochub_content::{CalloutKind, Markdown, Piece};
/// let md = Markdown::new(":::tip[Speed tip]\nBuild once.\n:::\n");
/// let pieces: Vec<_> = md.pieces().collect();
/// assert_eq!(pieces[0], Piece::CalloutStart { kind: CalloutKind::Tip, title: Some("Speed tip") });
/// assert_eq!(pieces.last(), Some(&Piece::CalloutEnd(CalloutKind::Tip)));
/// ```
#[derive(Debug, Clone)]
pub struct Markdown<'a> {
    /// The body, its directive lines replaced by marker paragraphs.
    text: Cow<'a, str>,
    /// The marker paragraphs, by offset in `text`.
    markers: Vec<Marker<'a>>,
}

#[derive(Debug, Clone)]
struct Marker<'a> {
    at: usize,
    /// Which open/close pair this marker belongs to.
    pair: usize,
    /// `Some` for an opener.
    open: Option<(CalloutKind, Option<&'a str>)>,
}

/// What `dochub check` reports about a page's directive lines: 1-based line and message.
pub type CalloutFinding = (usize, String);

/// The marker paragraph that stands for a directive line.
const MARK: &str = "\n:::\n\n";

impl<'a> Markdown<'a> {
    /// Finds the directive callouts of `body` (a page body, no frontmatter). A body without
    /// any is used as it is, with no copy and no extra parse.
    pub fn new(body: &'a str) -> Markdown<'a> {
        let scan = scan(body);
        if scan.pairs.is_empty() {
            return Markdown {
                text: Cow::Borrowed(body),
                markers: Vec::new(),
            };
        }
        let mut at_line: Vec<(usize, usize, bool)> = Vec::new();
        for (pair, (open, close)) in scan.pairs.iter().enumerate() {
            at_line.push((*open, pair, true));
            at_line.push((*close, pair, false));
        }
        at_line.sort_unstable();
        let mut text = String::with_capacity(body.len() + at_line.len() * MARK.len());
        let mut markers = Vec::with_capacity(at_line.len());
        let mut next = at_line.iter().peekable();
        for (index, line) in scan.lines.iter().enumerate() {
            match next.peek() {
                Some(&&(at, pair, is_open)) if at == index => {
                    next.next();
                    let open = match line.directive {
                        Some(Directive::Open {
                            kind: Ok(kind),
                            title,
                        }) if is_open => Some((kind, title)),
                        _ => None,
                    };
                    markers.push(Marker {
                        // The paragraph starts after the blank line.
                        at: text.len() + 1,
                        pair,
                        open,
                    });
                    text.push_str(MARK);
                }
                _ => text.push_str(&body[line.range.clone()]),
            }
        }
        Markdown {
            text: Cow::Owned(text),
            markers,
        }
    }

    /// The body's markdown events, with callouts (both forms) as [`Piece::CalloutStart`] and
    /// [`Piece::CalloutEnd`].
    pub fn pieces(&self) -> impl Iterator<Item = Piece<'_>> + '_ {
        Pieces {
            parser: Parser::new_ext(&self.text, markdown_options()).into_offset_iter(),
            markers: &self.markers,
            next_marker: 0,
            open: Vec::new(),
            closing: 0,
            alerts: Vec::new(),
        }
    }
}

/// What `dochub check` says about the directive lines of `body`: unknown kinds, openers never
/// closed, closers that close nothing. Each of those lines is shown as text.
///
/// ```
/// let findings = dochub_content::callout_findings("Intro\n\n:::foo\nText\n:::\n");
/// assert_eq!(findings[0].0, 3);
/// assert!(findings[0].1.contains("unknown callout kind `foo`"));
/// ```
pub fn callout_findings(body: &str) -> Vec<CalloutFinding> {
    let scan = scan(body);
    let mut out = scan.findings;
    out.sort_by_key(|(line, _)| *line);
    out
}

/// A directive line, read.
#[derive(Debug, Clone, Copy)]
enum Directive<'a> {
    Open {
        /// The kind, or the unknown name written.
        kind: Result<CalloutKind, &'a str>,
        title: Option<&'a str>,
    },
    Close,
}

struct Line<'a> {
    range: Range<usize>,
    directive: Option<Directive<'a>>,
}

struct Scan<'a> {
    lines: Vec<Line<'a>>,
    /// Line indexes of each known-kind opener and its closer.
    pairs: Vec<(usize, usize)>,
    findings: Vec<CalloutFinding>,
}

/// Reads one line (without its line ending) as a directive, if it is one.
fn directive(line: &str) -> Option<Directive<'_>> {
    let rest = line.trim_start_matches(':');
    if line.len() - rest.len() < 3 {
        return None;
    }
    let rest = rest.trim_end();
    if rest.is_empty() {
        return Some(Directive::Close);
    }
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_len);
    if name.is_empty() {
        return None;
    }
    let title = if after.is_empty() {
        None
    } else if let Some(inner) = after.strip_prefix('[') {
        Some(inner.strip_suffix(']')?.trim())
    } else if after.starts_with(char::is_whitespace) {
        Some(after.trim())
    } else {
        return None;
    };
    Some(Directive::Open {
        kind: CalloutKind::from_name(name).ok_or(name),
        title: title.filter(|t| !t.is_empty()),
    })
}

/// Finds the directive lines of `body` and pairs them up.
fn scan(body: &str) -> Scan<'_> {
    let mut scan = Scan {
        lines: Vec::new(),
        pairs: Vec::new(),
        findings: Vec::new(),
    };
    // Cheap test first: most pages have no line starting with `:::`.
    if !(body.starts_with(":::") || body.contains("\n:::")) {
        return scan;
    }
    let verbatim = verbatim_blocks(body);
    let mut blocks = verbatim.iter().peekable();
    let mut start = 0;
    for raw in body.split_inclusive('\n') {
        let range = start..start + raw.len();
        start = range.end;
        // Both in document order: pass the blocks that end before this line.
        while blocks.next_if(|block| block.end <= range.start).is_some() {}
        let in_block = blocks
            .peek()
            .is_some_and(|block| block.start <= range.start);
        let text = raw.trim_end_matches(['\n', '\r']);
        let directive = if in_block { None } else { directive(text) };
        scan.lines.push(Line { range, directive });
    }
    // Openers waiting for their closer: line index, and the kind if it is known.
    let mut open: Vec<(usize, Result<CalloutKind, &str>)> = Vec::new();
    for (index, line) in scan.lines.iter().enumerate() {
        match line.directive {
            Some(Directive::Open { kind, .. }) => open.push((index, kind)),
            Some(Directive::Close) => match open.pop() {
                Some((opener, Ok(_))) => scan.pairs.push((opener, index)),
                Some((opener, Err(name))) => scan.findings.push((
                    opener + 1,
                    format!(
                        "unknown callout kind `{name}`, shown as text; use one of: {}",
                        kind_list()
                    ),
                )),
                None => scan.findings.push((
                    index + 1,
                    "`:::` closes no callout and is shown as text".to_owned(),
                )),
            },
            None => {}
        }
    }
    for (opener, kind) in open {
        let message = match kind {
            Ok(kind) => format!(
                "callout `:::{}` is never closed (a line of `:::` alone closes it), shown as text",
                kind.name()
            ),
            Err(name) => format!(
                "unknown callout kind `{name}` with no closing `:::`, shown as text; use one of: {}",
                kind_list()
            ),
        };
        scan.findings.push((opener + 1, message));
    }
    scan
}

fn kind_list() -> String {
    CalloutKind::ALL.map(CalloutKind::name).join(", ")
}

/// The byte ranges of `body` whose text the parser keeps verbatim: code blocks and raw HTML
/// blocks. A directive line there is text.
fn verbatim_blocks(body: &str) -> Vec<Range<usize>> {
    Parser::new_ext(body, markdown_options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock) => Some(range),
            _ => None,
        })
        .collect()
}

struct Pieces<'p, 'a> {
    parser: pulldown_cmark::OffsetIter<'p>,
    markers: &'p [Marker<'a>],
    next_marker: usize,
    /// The directive callouts open now: their pair and kind.
    open: Vec<(usize, CalloutKind)>,
    /// Ends still to hand out before the next event.
    closing: usize,
    /// Kinds of the blockquotes open now (`None`: a plain one), so each end is matched.
    alerts: Vec<Option<CalloutKind>>,
}

impl<'p> Iterator for Pieces<'p, '_> {
    type Item = Piece<'p>;

    fn next(&mut self) -> Option<Piece<'p>> {
        loop {
            if self.closing > 0 {
                self.closing -= 1;
                let (_, kind) = self.open.pop()?;
                return Some(Piece::CalloutEnd(kind));
            }
            let Some((event, range)) = self.parser.next() else {
                // Balanced by construction; this only guards a marker the parser swallowed.
                let (_, kind) = self.open.pop()?;
                return Some(Piece::CalloutEnd(kind));
            };
            // A marker the parser did not see as its own paragraph is passed over.
            while self
                .markers
                .get(self.next_marker)
                .is_some_and(|m| m.at < range.start)
            {
                self.next_marker += 1;
            }
            let marker = match event {
                Event::Start(Tag::Paragraph) => self
                    .markers
                    .get(self.next_marker)
                    .filter(|m| m.at == range.start),
                _ => None,
            };
            let Some(marker) = marker else {
                return Some(self.event(event));
            };
            self.next_marker += 1;
            for (event, _) in self.parser.by_ref() {
                if event == Event::End(TagEnd::Paragraph) {
                    break;
                }
            }
            match marker.open {
                Some((kind, title)) => {
                    self.open.push((marker.pair, kind));
                    return Some(Piece::CalloutStart { kind, title });
                }
                // Close up to this marker's opener; nothing if it was never opened.
                None => {
                    if let Some(at) = self.open.iter().rposition(|(pair, _)| *pair == marker.pair) {
                        self.closing = self.open.len() - at;
                    }
                }
            }
        }
    }
}

impl<'p> Pieces<'p, '_> {
    /// An event of the parser, an alert's blockquote turned into a callout.
    fn event(&mut self, event: Event<'p>) -> Piece<'p> {
        match event {
            Event::Start(Tag::BlockQuote(kind)) => {
                let kind = kind.map(CalloutKind::from_alert);
                self.alerts.push(kind);
                match kind {
                    Some(kind) => Piece::CalloutStart { kind, title: None },
                    None => Piece::Event(Event::Start(Tag::BlockQuote(None))),
                }
            }
            Event::End(TagEnd::BlockQuote(_)) => match self.alerts.pop().flatten() {
                Some(kind) => Piece::CalloutEnd(kind),
                None => Piece::Event(Event::End(TagEnd::BlockQuote(None))),
            },
            other => Piece::Event(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces as short strings: `[tip "Title"`, `]`, and the events' text.
    fn outline(body: &str) -> Vec<String> {
        let md = Markdown::new(body);
        md.pieces()
            .filter_map(|piece| match piece {
                Piece::CalloutStart { kind, title } => Some(match title {
                    Some(t) => format!("[{} {t:?}", kind.name()),
                    None => format!("[{}", kind.name()),
                }),
                Piece::CalloutEnd(kind) => Some(format!("{}]", kind.name())),
                Piece::Event(Event::Text(t)) => Some(t.into_string()),
                Piece::Event(Event::Start(Tag::CodeBlock(_))) => Some("<code>".into()),
                Piece::Event(Event::Start(Tag::List(_))) => Some("<list>".into()),
                Piece::Event(Event::End(TagEnd::List(_))) => Some("</list>".into()),
                Piece::Event(Event::Start(Tag::BlockQuote(_))) => Some("<quote>".into()),
                Piece::Event(Event::End(TagEnd::BlockQuote(_))) => Some("</quote>".into()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn directive_forms() {
        assert_eq!(
            outline(":::note\nPlain.\n:::\n"),
            ["[note", "Plain.", "note]"]
        );
        assert_eq!(
            outline("Before\n:::tip[Speed tip]\nFast.\n:::\nAfter"),
            ["Before", "[tip \"Speed tip\"", "Fast.", "tip]", "After"]
        );
        assert_eq!(
            outline("::: danger STOP\nNo.\n:::"),
            ["[danger \"STOP\"", "No.", "danger]"]
        );
        assert_eq!(outline(":::INFO[]\nx\n:::"), ["[info", "x", "info]"]);
        for kind in CalloutKind::ALL {
            let body = format!(":::{}\nx\n:::\n", kind.name());
            assert_eq!(
                outline(&body),
                [
                    format!("[{}", kind.name()),
                    "x".into(),
                    format!("{}]", kind.name())
                ]
            );
        }
    }

    #[test]
    fn alerts() {
        assert_eq!(
            outline("> [!WARNING]\n> Careful.\n\n> plain quote\n"),
            [
                "[warning",
                "Careful.",
                "warning]",
                "<quote>",
                "plain quote",
                "</quote>"
            ]
        );
        assert_eq!(
            outline("> [!NOTE]\n> > [!TIP]\n> > inner\n"),
            ["[note", "[tip", "inner", "tip]", "note]"]
        );
    }

    #[test]
    fn nesting_with_blocks() {
        // A list ends at the closer, whose line would otherwise continue its last item.
        assert_eq!(
            outline(":::note\n- a\n- b\n:::\nafter\n"),
            ["[note", "<list>", "a", "b", "</list>", "note]", "after"]
        );
        // Nested callouts, the outer with more colons as Docusaurus writes them.
        assert_eq!(
            outline("::::warning[Outer]\n:::tip\ninner\n:::\nouter\n::::\n"),
            [
                "[warning \"Outer\"",
                "[tip",
                "inner",
                "tip]",
                "outer",
                "warning]"
            ]
        );
        // An alert inside a directive.
        assert_eq!(
            outline(":::info\n> [!CAUTION]\n> hot\n:::\n"),
            ["[info", "[caution", "hot", "caution]", "info]"]
        );
    }

    #[test]
    fn verbatim_text_stays() {
        // In a fence, directive lines are code.
        assert_eq!(
            outline("```md\n:::note\nx\n:::\n```\n"),
            ["<code>", ":::note\nx\n:::\n"]
        );
        // A fence inside a callout keeps its own `:::` lines.
        assert_eq!(
            outline(":::tip\n```text\n:::\n```\n:::\n"),
            ["[tip", "<code>", ":::\n", "tip]"]
        );
        // Indented: text, part of the list item.
        assert_eq!(
            outline("- item\n\n  :::note\n  x\n  :::\n"),
            ["<list>", "item", ":::note", "x", ":::", "</list>"]
        );
        // Raw HTML block.
        assert_eq!(outline("<div>\n:::note\n:::\n</div>\n").len(), 0);
    }

    #[test]
    fn malformed_stays_text() {
        assert_eq!(
            outline(":::note\nnever closed\n"),
            [":::note", "never closed"]
        );
        assert_eq!(outline(":::\nstray\n"), [":::", "stray"]);
        assert_eq!(outline(":::foo\nx\n:::\n"), [":::foo", "x", ":::"]);
        // An unknown kind's closer does not close the callout around it.
        assert_eq!(
            outline(":::note\n:::foo\nx\n:::\ny\n:::\n"),
            ["[note", ":::foo", "x", ":::", "y", "note]"]
        );
        assert_eq!(
            outline(":::note{.x}\n:::\n").first().map(String::as_str),
            Some(":::note{.x}")
        );
        assert_eq!(outline("::note\n::\n"), ["::note", "::"]);
    }

    #[test]
    fn findings() {
        let body = "a\n:::foo\nx\n:::\n:::\n:::tip\nopen\n```\n:::note\n```\n:::bar\n";
        let findings = callout_findings(body);
        let lines: Vec<_> = findings.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [2, 5, 6, 11], "{findings:?}");
        assert!(findings[0].1.contains("unknown callout kind `foo`"));
        assert!(findings[1].1.contains("closes no callout"));
        assert!(findings[2].1.contains("`:::tip` is never closed"));
        assert!(findings[3].1.contains("`bar`"));
        assert!(callout_findings(":::note\nfine\n:::\n").is_empty());
    }

    #[test]
    fn no_directives_no_copy() {
        let md = Markdown::new("# Title\n\nText with ::: inside.\n");
        assert!(matches!(md.text, Cow::Borrowed(_)));
    }
}

//! A page of a versioned subproject: the sidebar shows the versions as one entry, the version
//! switcher links each version, an older version says so and names its canonical page, and the
//! search box keeps to the version.

use dochub_render::{
    Location, Nav, NavItem, NavProject, NavSubproject, VersionLink, VersionSwitcher, document_page,
    render_markdown,
};

fn nav() -> Nav {
    let sub = |id: &str, name: &str, pages: &[(&str, &str)]| NavSubproject {
        subproject: NavItem::new(id, name),
        pages: pages.iter().map(|(i, t)| NavItem::new(*i, *t)).collect(),
    };
    Nav {
        projects: vec![NavProject {
            project: NavItem::new("spin", "Spin"),
            subprojects: vec![
                sub("v2", "Spin 2", &[]),
                sub("faq", "FAQ", &[]),
                sub(
                    "v1",
                    "Spin <1>",
                    &[("install", "Install"), ("templates", "Templates")],
                ),
            ],
            versions: vec!["v2".into(), "v1".into()],
        }],
        has_reports: false,
        ..Nav::default()
    }
}

fn switcher(current: usize, canonical: Option<&str>) -> VersionSwitcher {
    VersionSwitcher {
        links: vec![
            VersionLink {
                id: "v2".into(),
                name: "Spin 2".into(),
                href: "/docs/spin/v2/".into(),
                same_page: false,
            },
            VersionLink {
                id: "v1".into(),
                name: "Spin <1>".into(),
                href: "/docs/spin/v1/templates".into(),
                same_page: true,
            },
        ],
        current,
        canonical: canonical.map(str::to_owned),
    }
}

fn page(nav: &Nav, subproject: &str) -> String {
    let here = Location {
        project: Some(NavItem::new("spin", "Spin")),
        subproject: Some(NavItem::new(subproject, "Spin 1")),
        page: Some(NavItem::new("templates", "Templates")),
    };
    let rendered = render_markdown("# Templates\n\nText.\n", &["spin", subproject]);
    document_page(nav, &here, "Templates", "", &rendered).expect("renders")
}

#[test]
fn an_older_version_shows_the_switcher_the_notice_and_one_sidebar_entry() {
    let mut nav = nav();
    nav.version = Some("v1".into());
    nav.switcher = Some(switcher(1, None));
    let html = page(&nav, "v1");
    // One entry for the versions, the one being read, in the place of the first listed.
    let sidebar = &html[html.find(r#"<nav class="sidebar""#).unwrap()..html.find("<main").unwrap()];
    assert!(!sidebar.contains("/docs/spin/v2/"), "{sidebar}");
    let v1 = sidebar.find(r#"href="/docs/spin/v1/""#).expect("v1 entry");
    let faq = sidebar
        .find(r#"href="/docs/spin/faq/""#)
        .expect("faq entry");
    assert!(v1 < faq, "{sidebar}");
    assert!(sidebar.contains(r#"href="/docs/spin/v1/install""#));
    // The switcher: every version, the one read marked, names escaped.
    assert!(html.contains(r#"<nav class="versions" aria-label="Versions">"#));
    assert!(html.contains(
        r#"<a href="/docs/spin/v1/templates" class="active" aria-current="page">Spin &#60;1&#62;</a>"#
    ), "{html}");
    assert!(html.contains(r#"<a href="/docs/spin/v2/" title="No such page in Spin 2: its first page">Spin 2 <span class="versions-latest">latest</span></a>"#), "{html}");
    // The page is not in the latest: the notice leads to its landing, no canonical.
    assert!(html.contains(r#"<p class="version-notice" role="note">You are reading <strong>Spin &#60;1&#62;</strong>, an older version. <a href="/docs/spin/v2/">Go to Spin 2, the latest</a>.</p>"#), "{html}");
    assert!(!html.contains(r#"rel="canonical""#));
    // The search box keeps to the version.
    assert!(html.contains(r#"<input type="hidden" name="version" value="v1">"#));
}

#[test]
fn an_older_page_in_the_latest_is_its_canonical_page() {
    let mut nav = nav();
    let mut s = switcher(1, Some("http://docs.example/docs/spin/v2/templates"));
    s.links[0].href = "/docs/spin/v2/templates".into();
    s.links[0].same_page = true;
    nav.switcher = Some(s);
    let html = page(&nav, "v1");
    assert!(
        html.contains(
            r#"<link rel="canonical" href="http://docs.example/docs/spin/v2/templates">"#
        )
    );
    assert!(
        html.contains(
            r#"<a href="/docs/spin/v2/templates">Read this page in Spin 2, the latest</a>"#
        )
    );
}

#[test]
fn the_latest_version_has_a_switcher_and_no_notice() {
    let mut nav = nav();
    nav.version = Some("v2".into());
    nav.switcher = Some(switcher(0, None));
    let html = page(&nav, "v2");
    assert!(html.contains(r#"<nav class="versions""#));
    assert!(!html.contains(r#"class="version-notice""#));
    assert!(!html.contains(r#"rel="canonical""#));
    // Away from the versions, the sidebar shows the latest.
    let mut away = self::nav();
    away.projects[0].subprojects.swap(0, 2);
    let html = page(&away, "faq");
    assert!(html.contains(r#"href="/docs/spin/v2/""#));
    assert!(!html.contains(r#"href="/docs/spin/v1/""#));
    assert!(!html.contains(r#"name="version""#));
}

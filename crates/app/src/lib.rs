//! dochub's docs routes, each a plain function from a request to a response
//! ([`dochub_http::Request`], [`dochub_http::Response`]) so that a Spin component is a page of
//! glue and every route is tested natively:
//!
//! - [`api`]: `/api/...`, the JSON manifests, raw pages, search and the latest report (the api
//!   component; `/api/health` takes the host's readings);
//! - [`agents`]: what agents read instead of whole pages: a page's section, a cut within a
//!   budget of tokens, the sections that answer a question (`/api/query`, the MCP tools);
//! - [`docs`]: `/docs/...`, the rendered site (the docs component);
//! - [`llms`]: `/llms.txt` and `/llms-full.txt` (the docs component too);
//! - [`crawl`]: `/robots.txt` and `/sitemap.xml` (the docs component too);
//! - [`mcp`]: `/mcp`, the MCP server over Streamable HTTP (the mcp component);
//! - [`negotiate`]: whether an `Accept` header prefers a page's markdown to its HTML;
//! - [`kept`]: the raw pages a reused instance keeps, where the mounts are a copy.
//!
//! Each reads the content through [`dochub_index::Source::read`], which asks the prebuilt
//! index and falls back to the live tree; none of them knows which catalog answered. The
//! overview pages (`dochub-overview`) and the hub (`dochub-hub`) keep their routes beside
//! their own models, in the same request and response shape.
#![deny(missing_docs)]

pub mod agents;
pub mod api;
pub mod crawl;
pub mod docs;
pub mod kept;
pub mod llms;
pub mod mcp;
pub mod negotiate;

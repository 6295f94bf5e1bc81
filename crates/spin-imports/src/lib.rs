//! The Spin interfaces dochub's components call besides HTTP, bound from `wit/` (Spin v4.0.2's
//! own definitions): the key-value store (`wasi:keyvalue`), SQLite (`spin:sqlite@3.0.0`),
//! PostgreSQL (`spin:postgres@3.0.0`) and variables (`fermyon:spin/variables@2.0.0`).
//!
//! spin-sdk 5 binds the same interfaces, but a component cannot link it beside spin-sdk 6: both
//! export the symbol `spin-sdk-commit-unknown`. So the libraries that reach Spin's stores
//! (`dochub-index`, `dochub-hub-spin`) use these bindings, and serve a WASIp2 component (spin-sdk
//! 5) and a WASIp3 one (spin-sdk 6) alike. Their functions are synchronous: Spin v4.0.2 links
//! them for both kinds of component. A component imports only what it calls, so the edge build,
//! which calls no SQLite, imports none.
//!
//! The generated code is `unsafe` by nature (the canonical ABI); nothing else here is.
#![allow(unsafe_code)]
#![allow(missing_docs)]

wit_bindgen::generate!({
    path: "../../wit",
    world: "dochub:host/component-imports",
    generate_all,
});

pub use fermyon::spin::variables;
pub use spin::postgres::postgres as pg3;
pub use spin::sqlite::sqlite as sqlite3;
pub use wasi::keyvalue::{atomics, store};

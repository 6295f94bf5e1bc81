//! The one `bindgen!` over `wit/`: the Spin interfaces this host implements besides WASI 0.2.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "dochub:host/spin-imports",
    imports: { default: async | trappable },
    with: {
        "fermyon:spin/key-value.store": crate::kv::SpinStore,
        "wasi:keyvalue/store.bucket": crate::kv::Bucket,
        "wasi:keyvalue/atomics.cas": crate::kv::CasHandle,
        "spin:postgres/postgres.connection": crate::postgres::PgConnection,
        "fermyon:spin/sqlite.connection": crate::sqlite::SqliteConnection,
        "spin:sqlite/sqlite.connection": crate::sqlite::SqliteConnection,
    },
});

pub use fermyon::spin::{
    key_value as spin_key_value, sqlite as sqlite_v2, variables as spin_variables,
};
pub use spin::postgres::postgres;
pub use spin::sqlite::sqlite as sqlite_v3;
pub use spin::variables::variables as spin_variables_v3;
pub use wasi::keyvalue::{atomics as wasi_atomics, batch as wasi_batch, store as wasi_store};

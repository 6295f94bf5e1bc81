//! The one `bindgen!` over `wit/`: the Spin interfaces this host implements besides WASI 0.2.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "dochub:host/spin-imports",
    imports: { default: async | trappable },
    with: {
        "fermyon:spin/key-value.store": crate::kv::SpinStore,
        "wasi:keyvalue/store.bucket": crate::kv::Bucket,
        "wasi:keyvalue/atomics.cas": crate::kv::Cas,
        "spin:postgres/postgres.connection": crate::postgres::PgConnection,
    },
});

pub use fermyon::spin::{key_value as spin_key_value, variables as spin_variables};
pub use spin::postgres::postgres;
pub use wasi::keyvalue::{atomics as wasi_atomics, batch as wasi_batch, store as wasi_store};

//! Where a host call's blocking work runs, chosen as Spin v4.0.2 chooses it, because the choice
//! decides when a WASIp3 response's body reaches its connection.
//!
//! Spin runs its environment-variable provider (`crates/variables-env`, consulted on every
//! variable read) and every call of its SQLite key-value store, opening one included
//! (`crates/key-value-spin/src/store.rs`), inside [`tokio::task::block_in_place`]. That hands the
//! worker's queue to another thread for the rest of the poll, so the connection's task, woken
//! when the guest's response is ready, runs on that other thread at once; it then often finds
//! the body not yet written and sends the head alone, and Nagle holds the body until the
//! client's delayed ACK, about 40 ms later. SQLite databases (`crates/sqlite-inproc`) and
//! files (wasmtime-wasi's default) go through `spawn_blocking`. This host does the same, so a
//! guest that stalls under `spin up` stalls here.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work` on this thread as `block_in_place` does, where that is possible (a worker of a
/// multi-threaded runtime, as `spin up`'s is); elsewhere, as a plain call.
pub(crate) fn in_place<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

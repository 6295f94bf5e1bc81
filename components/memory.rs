//! Build script shared by the components: the layout of their linear memory.
//!
//! A WASIp2 component (docs, health, mcp; api and overview in their WASIp2 builds) runs every
//! request in a fresh instance; a WASIp3 one (api, overview, hub) serves many requests in one
//! instance. When an instance ends, Spin's runtime (wasmtime's pooling allocator, as Spin
//! v4.0.2 configures it in `crates/core`: 2 MiB kept resident, no dirty-page scan) resets its
//! memory by writing back every accessible byte up to 2 MiB, and a memory the instance grew is
//! shrunk back by an `mprotect` that interrupts the other cores to flush their TLBs. Both cost
//! per byte of memory, not per byte used: with Rust's default 1 MiB stack, and a memory that
//! grew on every request, they were a quarter of what `/api/raw` cost (`perf`).
//!
//! So the stack is a quarter of the default: the end-to-end tests, the `hostile` ones among them
//! (pages nested as deep as the content limits allow), pass with a quarter of that again. And
//! the memory starts large enough that health, raw pages, manifests, overviews and docs pages
//! never grow it; a search or a large page still grows it as far as it needs.

/// wasm-ld puts the stack first, then the data (under 192 KiB in every component), then the heap.
const STACK_BYTES: u32 = 256 << 10;

/// A whole number of 64 KiB pages.
const INITIAL_MEMORY_BYTES: u32 = 768 << 10;

fn main() {
    // Native builds (tests, clippy) link no wasm memory.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=-zstack-size={STACK_BYTES}");
        println!("cargo:rustc-link-arg-cdylib=--initial-memory={INITIAL_MEMORY_BYTES}");
    }
    println!("cargo:rerun-if-changed=../memory.rs");
}

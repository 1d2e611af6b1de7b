//! oxla-pjrt against the real PJRT plugins: every test runs once per pinned
//! CPU plugin (third_party/plugins.toml), an older and a newer C API.

/// Tests compile into a cache of their own, not the user's, and the binary
/// aborts (named) rather than hang.
#[ctor::ctor(unsafe)]
fn prepare_test_binary() {
    // SAFETY: constructors run before main, with no other thread.
    unsafe { oxla_testing::prepare_test_binary(env!("CARGO_TARGET_TMPDIR"), "oxla-pjrt-plugin") };
}

mod async_transfer;
mod buffers;
mod client;
mod discovery;
mod execute;
mod host_callbacks;
mod layout;
mod loading;
mod plugin_log;
mod preload;
mod profiler;
mod support;
mod tpu;

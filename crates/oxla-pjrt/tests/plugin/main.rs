//! oxla-pjrt against the real PJRT plugins: every test runs once per pinned
//! CPU plugin (third_party/plugins.toml), an older and a newer C API.

mod async_transfer;
mod buffers;
mod client;
mod discovery;
mod execute;
mod loading;
mod preload;
mod support;

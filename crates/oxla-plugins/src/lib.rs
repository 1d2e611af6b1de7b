//! oxla's pinned PJRT plugins and their installer (`oxla plugin install`,
//! `oxla plugin list`).
//!
//! The plugins are Python wheels on PyPI. This crate owns their pins (the
//! files in `pins/`, compiled in): for each [`Choice`] (`cpu`, `cuda12`,
//! `cuda13`, `rocm`, `tpu`) the wheels, their versions and SHA-256. An
//! [`Installer`] downloads each wheel with `python3 -m pip download
//! --no-deps` (so pip's index, proxy and certificate settings apply),
//! checks its SHA-256, unpacks it (keeping executable bits) into a staging
//! directory and renames that to `<dest>/<name>-<version>/` with a
//! `.oxla-sha256` stamp; a plugin already there with the stamp of its pins
//! is skipped. Every failure is one [`Error`] line and leaves nothing half
//! installed. [`list`] says what a plugin directory holds and whether it
//! matches the pins.
//!
//! ```no_run
//! use oxla_plugins::{Choice, Installer, Step};
//!
//! let installer = Installer::new("/home/me/.cache/oxla/plugins");
//! for plugin in Choice::Cpu.plugins()? {
//!     let done = installer.install(&plugin, &mut |step| match step {
//!         Step::Download { wheel, .. } => println!("downloading {wheel}"),
//!     })?;
//!     println!("{} at {}", plugin.name(), done.dir.display());
//! }
//! # Ok::<(), oxla_plugins::Error>(())
//! ```
#![warn(missing_docs)]

mod error;
mod install;
mod list;
mod pins;

pub use error::{Error, Result};
pub use install::{Installed, Installer, STAMP_FILE, Step, sha256_file};
pub use list::{InstalledPlugin, Status, list};
pub use pins::{Choice, EMBEDDED_PINS, Manifest, Plugin, Wheel};

//! oxla's persistent compile cache: a compiled PJRT executable is
//! serialized to disk under a key that covers everything deciding the
//! compiler's output, so a restarted process loads it instead of compiling.
//! [`compile`] is the one entry point every compilation goes through.
#![warn(missing_docs)]

mod entry;
mod key;
mod sharing;
mod store;
mod trust;

use std::time::{Duration, Instant};

use oxla_pjrt::{Client, CompileOptions, LoadedExecutable, Program};

pub use entry::{Entry, EntryError, FORMAT_VERSION};
pub use key::{Key, PlatformIdentity, canonical_module, key};
pub use sharing::{CacheKey, KeyError, MIN_KEY_BYTES, Sharing};
pub use store::{DEFAULT_MAX_BYTES, DiskCache, Listed, Lookup, StoreError};

/// Where an executable came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// Compiled now (and stored, if a cache was given and writable).
    Compiled {
        /// How long compiling took.
        compile: Duration,
    },
    /// Loaded from the disk cache.
    DiskHit {
        /// How long loading took.
        load: Duration,
        /// How long the compilation it replaced took.
        saved: Duration,
    },
}

/// A compiled executable and where it came from, with the warnings worth
/// showing once (a damaged entry, an unwritable cache directory).
pub struct Compiled {
    /// The executable.
    pub executable: LoadedExecutable,
    /// Where it came from.
    pub source: Source,
    /// Problems met on the way (the compilation still succeeded).
    pub warnings: Vec<String>,
}

/// Compiles `program` for `client`, through `cache` when one is given: a
/// valid entry is loaded; a missing, damaged or unloadable one is compiled
/// and (re)written. Cache problems never fail the compilation.
pub fn compile(
    client: &Client,
    program: &Program,
    options: &CompileOptions,
    cache: Option<&DiskCache>,
) -> oxla_pjrt::Result<Compiled> {
    let mut warnings = Vec::new();
    if let Some(problem) = cache.and_then(DiskCache::unusable)
        && cache.is_some_and(DiskCache::first_warning)
    {
        warnings.push(format!("oxla: {problem}; compiling without it"));
    }
    let Some(cache) = cache.filter(|c| c.unusable().is_none()) else {
        let start = Instant::now();
        let executable = client.compile(program, options)?;
        return Ok(Compiled {
            executable,
            source: Source::Compiled {
                compile: start.elapsed(),
            },
            warnings,
        });
    };
    client.prepare_for(program)?;
    let identity = PlatformIdentity::of(client)?;
    let key = key::key(
        &canonical_module(program.code()),
        &options.to_proto_bytes()?,
        &identity,
    );
    let start = Instant::now();
    match cache.load(&key) {
        Lookup::Hit(entry) => match client.deserialize_and_load(&entry.executable) {
            Ok(executable) => {
                return Ok(Compiled {
                    executable,
                    source: Source::DiskHit {
                        load: start.elapsed(),
                        saved: Duration::from_nanos(entry.compile_nanos),
                    },
                    warnings,
                });
            }
            Err(e) => {
                cache.remove(&key);
                warnings.push(format!(
                    "oxla: ignored cache entry {} that the plugin cannot load ({e}); compiling again",
                    key.hex()
                ));
            }
        },
        Lookup::Corrupt(problem) => warnings.push(format!(
            "oxla: ignored damaged cache entry {} ({problem}); compiling again",
            key.hex()
        )),
        Lookup::Untrusted(why) => {
            if cache.first_warning() {
                warnings.push(format!(
                    "oxla: not using the compile cache: {why}, so another user could have \
                     written its code; compiling (make it this user's with mode 700, or share it \
                     with OXLA_CACHE_SHARED and a key)"
                ));
            }
        }
        Lookup::Miss => {}
    }
    let start = Instant::now();
    let executable = client.compile(program, options)?;
    let compile = start.elapsed();
    let stored = executable
        .serialize()
        .map_err(|e| e.to_string())
        .and_then(|bytes| {
            cache
                .store(&Entry {
                    key,
                    compile_nanos: compile.as_nanos() as u64,
                    executable: bytes,
                })
                .map_err(|e| e.to_string())
        });
    if let Err(e) = stored
        && cache.first_warning()
    {
        warnings.push(format!(
            "oxla: cannot write the compile cache at {} ({e}); continuing with the memory cache only",
            cache.dir().display()
        ));
    }
    Ok(Compiled {
        executable,
        source: Source::Compiled { compile },
        warnings,
    })
}

//! `oxla cache stats|list|clear|verify`: the persistent compile cache.

use anyhow::bail;
use clap::Subcommand;
use oxla_cache::DiskCache;

/// What to do with the cache.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Directory, number of entries, total size and limit.
    Stats,
    /// Each entry: key, size, compile time it saves, last use.
    List,
    /// Remove every entry (and leftovers of interrupted writes).
    Clear,
    /// Check every entry's header and checksum; exit 1 if one is bad.
    Verify,
}

fn cache() -> anyhow::Result<DiskCache> {
    match DiskCache::from_env() {
        Some(c) => Ok(c),
        None => bail!("the compile cache is off (OXLA_CACHE_DIR=off)"),
    }
}

/// Runs `oxla cache ...`.
pub fn run(command: &CacheCommand) -> anyhow::Result<()> {
    let cache = cache()?;
    match command {
        CacheCommand::Stats => {
            let entries = cache.list()?;
            let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
            println!("directory: {}", cache.dir().display());
            println!("entries:   {}", entries.len());
            println!(
                "size:      {bytes} bytes (limit {} bytes)",
                cache.max_bytes()
            );
            println!("leftovers: {} interrupted writes", cache.leftovers().len());
        }
        CacheCommand::List => {
            for e in cache.list()? {
                let saved = e
                    .compile_nanos
                    .map_or("?".to_string(), |n| format!("{:.2} ms", n as f64 / 1e6));
                let age = e.modified.elapsed().map(|d| d.as_secs()).unwrap_or(0);
                println!(
                    "{}  {:>10} bytes  compile {saved:>10}  used {age} s ago",
                    e.key.hex(),
                    e.bytes
                );
            }
        }
        CacheCommand::Clear => {
            let removed = cache.clear()?;
            println!("removed {removed} files from {}", cache.dir().display());
        }
        CacheCommand::Verify => {
            let entries = cache.list()?.len();
            let bad = cache.verify()?;
            for (key, problem) in &bad {
                println!("bad entry {}: {problem}", key.hex());
            }
            let leftovers = cache.leftovers();
            for p in &leftovers {
                println!(
                    "leftover of an interrupted write (never read): {}",
                    p.display()
                );
            }
            if !bad.is_empty() {
                bail!("{} of {entries} cache entries are bad", bad.len());
            }
            println!("{entries} entries ok");
        }
    }
    Ok(())
}

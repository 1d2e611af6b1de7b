//! How a GPU client takes device memory, read from the environment as JAX
//! reads it: `OXLA_GPU_PREALLOCATE`, `OXLA_GPU_MEMORY_FRACTION` and
//! `OXLA_GPU_ALLOCATOR`, or else JAX's own names for the same settings
//! (`XLA_PYTHON_CLIENT_PREALLOCATE`, `XLA_CLIENT_MEM_FRACTION` /
//! `XLA_PYTHON_CLIENT_MEM_FRACTION`, `XLA_PYTHON_CLIENT_ALLOCATOR`), so a
//! process that shares a GPU with JAX can be told the same thing. Unset,
//! the plugin's defaults apply (it reserves 75% of the memory up front).

use crate::ClientOptions;
use crate::named_value::Value;
use crate::settings::{FLAG_VALUES, Setting, parse_flag};

/// The allocators GPU plugins know (`allocator` client option).
pub const GPU_ALLOCATORS: &str = "default, platform, bfc, cuda_async";

/// The first of `names` that `lookup` finds, read with `parse` (a value
/// that does not parse is a warning and counts as unset).
fn first_set<T>(
    lookup: &impl Fn(&str) -> Option<String>,
    names: &[&str],
    accepted: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let (name, raw) = names
        .iter()
        .find_map(|name| lookup(name).map(|raw| (name, raw)))?;
    Setting::parse(name, Some(&raw), accepted, parse).value()
}

fn parse_fraction(v: &str) -> Option<f32> {
    v.parse::<f32>().ok().filter(|f| *f > 0.0 && *f <= 1.0)
}

fn parse_allocator(v: &str) -> Option<String> {
    let v = v.to_ascii_lowercase();
    GPU_ALLOCATORS.split(", ").any(|a| a == v).then_some(v)
}

impl ClientOptions {
    /// `self` plus the GPU memory settings of the environment (see the
    /// module documentation); settings that are not set add nothing.
    pub fn with_gpu_memory_from_environment(self) -> ClientOptions {
        self.with_gpu_memory_from(|name| std::env::var(name).ok())
    }

    /// `self` plus the GPU memory settings `lookup` gives for the variable
    /// names (see the module documentation).
    pub fn with_gpu_memory_from(self, lookup: impl Fn(&str) -> Option<String>) -> ClientOptions {
        let mut options = self;
        if let Some(preallocate) = first_set(
            &lookup,
            &["OXLA_GPU_PREALLOCATE", "XLA_PYTHON_CLIENT_PREALLOCATE"],
            FLAG_VALUES,
            parse_flag,
        ) {
            options = options.gpu_preallocate(preallocate);
        }
        if let Some(fraction) = first_set(
            &lookup,
            &[
                "OXLA_GPU_MEMORY_FRACTION",
                "XLA_CLIENT_MEM_FRACTION",
                "XLA_PYTHON_CLIENT_MEM_FRACTION",
            ],
            "a fraction of device memory in (0, 1]",
            parse_fraction,
        ) {
            options = options.gpu_memory_fraction(fraction);
        }
        if let Some(allocator) = first_set(
            &lookup,
            &["OXLA_GPU_ALLOCATOR", "XLA_PYTHON_CLIENT_ALLOCATOR"],
            GPU_ALLOCATORS,
            parse_allocator,
        ) {
            options = options.set("allocator", Value::String(allocator));
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_jax_reads_them() {
        assert_eq!(parse_fraction("0.5"), Some(0.5));
        assert_eq!(parse_fraction("1"), Some(1.0));
        assert_eq!(parse_fraction("0"), None);
        assert_eq!(parse_fraction("1.5"), None);
        assert_eq!(parse_fraction("half"), None);
        assert_eq!(parse_allocator("Platform"), Some("platform".into()));
        assert_eq!(parse_allocator("cuda_async"), Some("cuda_async".into()));
        assert_eq!(parse_allocator("malloc"), None);
    }

    fn options_for(vars: &[(&str, &str)]) -> ClientOptions {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClientOptions::new().with_gpu_memory_from(|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn jax_names_apply_and_oxla_names_win() {
        assert_eq!(options_for(&[]), ClientOptions::new());
        let jax = options_for(&[
            ("XLA_PYTHON_CLIENT_PREALLOCATE", "false"),
            ("XLA_PYTHON_CLIENT_MEM_FRACTION", ".25"),
            ("XLA_PYTHON_CLIENT_ALLOCATOR", "platform"),
        ]);
        assert_eq!(
            jax,
            ClientOptions::new()
                .gpu_preallocate(false)
                .gpu_memory_fraction(0.25)
                .set("allocator", Value::String("platform".into()))
        );
        let both = options_for(&[
            ("XLA_PYTHON_CLIENT_PREALLOCATE", "false"),
            ("OXLA_GPU_PREALLOCATE", "true"),
            ("XLA_CLIENT_MEM_FRACTION", "0.5"),
        ]);
        assert_eq!(
            both,
            ClientOptions::new()
                .gpu_preallocate(true)
                .gpu_memory_fraction(0.5)
        );
        // A typo is a warning (on stderr) and sets nothing.
        assert_eq!(
            options_for(&[("OXLA_GPU_MEMORY_FRACTION", "75%")]),
            ClientOptions::new()
        );
        assert!(
            options_for(&[("OXLA_GPU_ALLOCATOR", "cuda_async")])
                .check_types()
                .is_ok()
        );
    }
}

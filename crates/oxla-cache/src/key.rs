//! The cache key: SHA-256 over everything that decides what the compiler
//! produces — the canonical module (locations stripped), the serialized
//! compile options, the plugin's identity, the device topology, and the
//! cache format.

use std::fmt::Write as _;

use oxla_pjrt::Client;
use sha2::{Digest, Sha256};

use crate::entry::FORMAT_VERSION;

/// A 32-byte SHA-256 key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// Lowercase hex.
    pub fn hex(&self) -> String {
        self.0.iter().fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    }

    /// The key of a hex string.
    pub fn from_hex(text: &str) -> Option<Key> {
        if text.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Key(out))
    }
}

/// What identifies the plugin build and the devices an executable is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformIdentity(String);

impl PlatformIdentity {
    /// The identity of a client: platform name and version, PJRT C API
    /// version, the plugin's attributes (XLA and StableHLO versions), the
    /// plugin library's size, and each device's id and kind.
    pub fn of(client: &Client) -> oxla_pjrt::Result<Self> {
        let api = client.api();
        let mut text = format!(
            "platform={}\nversion={}\napi={}\n",
            client.platform_name()?,
            client.platform_version()?,
            api.version()
        );
        if let Ok(attributes) = api.plugin_attributes() {
            for a in attributes {
                let _ = writeln!(text, "attribute {}={}", a.name, a.value);
            }
        }
        let size = std::fs::metadata(api.path()).map(|m| m.len()).unwrap_or(0);
        let _ = writeln!(text, "plugin_bytes={size}");
        for d in client.devices()? {
            let _ = writeln!(text, "device {} {}", d.id()?, d.kind()?);
        }
        Ok(Self(text))
    }

    /// The identity's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The module text without MLIR locations (`loc(...)` and `#locN = ...`
/// lines), so that the same program traced from other source lines hits.
/// Bytecode is used as it is.
pub fn canonical_module(code: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(code) else {
        return code.to_vec();
    };
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.trim_start().starts_with("#loc") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("loc(") {
            let boundary = at == 0
                || !rest.as_bytes()[at - 1].is_ascii_alphanumeric()
                    && rest.as_bytes()[at - 1] != b'_';
            if !boundary {
                out.push_str(&rest[..at + 4]);
                rest = &rest[at + 4..];
                continue;
            }
            out.push_str(rest[..at].trim_end());
            // Skip to the matching parenthesis (strings may hold parentheses).
            let bytes = rest.as_bytes();
            let (mut depth, mut i, mut in_string) = (0usize, at + 3, false);
            while i < bytes.len() {
                match bytes[i] {
                    b'"' if bytes[i - 1] != b'\\' => in_string = !in_string,
                    b'(' if !in_string => depth += 1,
                    b')' if !in_string => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            rest = &rest[(i + 1).min(rest.len())..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    out.into_bytes()
}

/// The key of compiling `canonical_module` with `compile_options` for `platform`.
pub fn key(canonical_module: &[u8], compile_options: &[u8], platform: &PlatformIdentity) -> Key {
    let mut h = Sha256::new();
    let mut part = |label: &[u8], data: &[u8]| {
        h.update(label);
        h.update((data.len() as u64).to_le_bytes());
        h.update(data);
    };
    part(b"oxla-compile-cache", &FORMAT_VERSION.to_le_bytes());
    part(b"module", canonical_module);
    part(b"options", compile_options);
    part(b"platform", platform.as_str().as_bytes());
    Key(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_stripped_from_text_modules() {
        let a = "#loc = loc(unknown)\nmodule {\n  %0 = \"stablehlo.add\"(%a, %b) : (t, t) -> t loc(#loc1)\n} loc(#loc)\n#loc1 = loc(\"a.rs\":1:2)\n";
        let b =
            "module {\n  %0 = \"stablehlo.add\"(%a, %b) : (t, t) -> t loc(\"f (x).rs\":9:9)\n}\n";
        assert_eq!(
            canonical_module(a.as_bytes()),
            canonical_module(b.as_bytes())
        );
        assert_eq!(
            String::from_utf8(canonical_module(b.as_bytes())).unwrap(),
            "module {\n  %0 = \"stablehlo.add\"(%a, %b) : (t, t) -> t\n}\n"
        );
        let bytecode = b"ML\xefR\x00loc(".to_vec();
        assert_eq!(canonical_module(&bytecode), bytecode);
    }

    #[test]
    fn keys_differ_in_every_part() {
        let p = PlatformIdentity("cpu".into());
        let q = PlatformIdentity("cuda".into());
        let base = key(b"m", b"o", &p);
        assert_ne!(base, key(b"m2", b"o", &p));
        assert_ne!(base, key(b"m", b"o2", &p));
        assert_ne!(base, key(b"m", b"o", &q));
        assert_eq!(Key::from_hex(&base.hex()), Some(base));
    }
}

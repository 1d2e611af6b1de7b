//! oxla's `OXLA_*` environment settings, read one way everywhere: an unset
//! variable is the default; a value that does not parse is one warning line
//! on stderr naming the variable, the value and the accepted values, then
//! the default — never a silently ignored typo.

/// What a setting's raw value means: its value, or the warning to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting<T> {
    /// The variable is not set.
    Unset,
    /// The variable parsed.
    Value(T),
    /// The variable did not parse: the warning line (the default applies).
    Invalid(String),
}

impl<T> Setting<T> {
    /// Reads `raw` (the variable's value, if set) with `parse`; `accepted`
    /// describes the values `parse` takes, for the warning.
    pub fn parse(
        name: &str,
        raw: Option<&str>,
        accepted: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Setting<T> {
        match raw {
            None => Setting::Unset,
            Some(v) => match parse(v.trim()) {
                Some(value) => Setting::Value(value),
                None => Setting::Invalid(format!(
                    "oxla: warning: {name}={v:?} is not one of {accepted}; using the default"
                )),
            },
        }
    }

    /// The value, or `default` (printing the warning of an invalid value).
    pub fn or_default(self, default: T) -> T {
        self.value().unwrap_or(default)
    }

    /// The value if the variable is set and parses; an invalid value prints
    /// its warning and gives `None`, as an unset one does.
    pub fn value(self) -> Option<T> {
        match self {
            Setting::Unset => None,
            Setting::Value(v) => Some(v),
            Setting::Invalid(warning) => {
                eprintln!("{warning}");
                None
            }
        }
    }
}

/// The variable `name` read with `parse` (see [`Setting::parse`]); a value
/// that is not valid UTF-8 is invalid too.
pub fn setting<T>(name: &str, accepted: &str, parse: impl Fn(&str) -> Option<T>) -> Setting<T> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Setting::Unset,
        Err(std::env::VarError::NotUnicode(_)) => Setting::Invalid(format!(
            "oxla: warning: {name} is not valid UTF-8 (accepted: {accepted}); using the default"
        )),
        Ok(v) => Setting::parse(name, Some(&v), accepted, parse),
    }
}

/// The values a switch takes.
pub const FLAG_VALUES: &str = "1, 0, true, false, on, off, yes, no (or empty for off)";

/// A switch: `1/true/on/yes` or `0/false/off/no/""`, any case.
pub fn parse_flag(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "" | "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// The switch `name`, `false` when unset or invalid (with a warning).
pub fn flag(name: &str) -> bool {
    setting(name, FLAG_VALUES, parse_flag).or_default(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_take_the_usual_spellings_and_warn_on_anything_else() {
        for (v, want) in [
            ("1", true),
            ("TRUE", true),
            ("on", true),
            ("0", false),
            ("", false),
        ] {
            assert_eq!(parse_flag(v), Some(want), "{v:?}");
        }
        assert_eq!(
            Setting::parse("OXLA_LOG_COMPILES", Some("ture"), FLAG_VALUES, parse_flag),
            Setting::Invalid(format!(
                "oxla: warning: OXLA_LOG_COMPILES=\"ture\" is not one of {FLAG_VALUES}; using the default"
            ))
        );
        assert_eq!(
            Setting::parse("X", None, FLAG_VALUES, parse_flag),
            Setting::Unset
        );
    }

    #[test]
    fn numbers_parse_or_warn_naming_the_variable_and_the_accepted_values() {
        let parse = |v: &str| v.parse::<u64>().ok();
        assert_eq!(
            Setting::parse(
                "OXLA_CACHE_MAX_BYTES",
                Some(" 1024 "),
                "a byte count",
                parse
            ),
            Setting::Value(1024)
        );
        let Setting::Invalid(w) =
            Setting::parse("OXLA_CACHE_MAX_BYTES", Some("10GB"), "a byte count", parse)
        else {
            panic!("10GB parsed");
        };
        assert!(
            w.contains("OXLA_CACHE_MAX_BYTES=\"10GB\"") && w.contains("a byte count"),
            "{w}"
        );
        assert_eq!(
            Setting::parse("N", Some("10GB"), "a byte count", parse).or_default(7),
            7
        );
    }
}

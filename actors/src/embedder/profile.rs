//! Embedding profiles: how a model's vectors are made (pooling, whether to
//! L2-normalize, the token cut, query/document prefixes).
//!
//! These are properties of the model, not of kirocrew, so they are looked
//! up from the GGUF metadata (`general.architecture`, `general.name`,
//! `<arch>.pooling_type`) and a small table of known families, and can be
//! forced with `memory.embed_model_profile`. Nothing is hard-coded for one
//! model: an unknown model gets its GGUF pooling, normalization, and its
//! trained context as the cut, with no prefixes.

use serde::Serialize;

/// How token states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// Average over tokens (sentence-transformers BERT models).
    Mean,
    /// The first ([CLS]) token (BGE).
    Cls,
    /// The last token (decoder embedders such as Qwen3-Embedding).
    Last,
}

impl Pooling {
    /// From llama.cpp's `<arch>.pooling_type` GGUF value.
    pub fn from_gguf(value: i64) -> Option<Self> {
        match value {
            1 => Some(Pooling::Mean),
            2 => Some(Pooling::Cls),
            3 => Some(Pooling::Last),
            _ => None,
        }
    }
}

/// Everything that turns text into this model's vectors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddingProfile {
    /// Profile name (`minilm`, `qwen3`, …, or `gguf` when derived).
    pub name: String,
    /// Pooling.
    pub pooling: Pooling,
    /// L2-normalize the pooled vector (llama.cpp returns it raw).
    pub normalize: bool,
    /// Longest input in tokens (special tokens included); longer inputs
    /// are cut at a token boundary, keeping the final special token.
    pub max_tokens: usize,
    /// Prepended to search queries.
    pub query_prefix: String,
    /// Prepended to stored documents.
    pub document_prefix: String,
}

/// Known model families: (profile name, matcher on lowercase general.name
/// or file name, pooling, max tokens, query prefix, document prefix).
const FAMILIES: &[(&str, &str, Pooling, usize, &str, &str)] = &[
    // sentence-transformers truncates MiniLM at 256 (not stored in the GGUF).
    ("minilm", "minilm", Pooling::Mean, 256, "", ""),
    ("mpnet", "mpnet", Pooling::Mean, 384, "", ""),
    (
        "qwen3",
        "qwen3",
        Pooling::Last,
        2048,
        "Instruct: Given a search query, retrieve relevant passages that answer the query\nQuery: ",
        "",
    ),
    (
        "bge",
        "bge",
        Pooling::Cls,
        512,
        "Represent this sentence for searching relevant passages: ",
        "",
    ),
    ("e5", "e5", Pooling::Mean, 512, "query: ", "passage: "),
    (
        "nomic",
        "nomic",
        Pooling::Mean,
        2048,
        "search_query: ",
        "search_document: ",
    ),
    ("gte", "gte", Pooling::Mean, 512, "", ""),
];

/// Names accepted by `memory.embed_model_profile` (besides empty = auto).
pub fn known_profiles() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.0).chain(["gguf"]).collect()
}

/// What the GGUF says about the model.
#[derive(Debug, Clone, Default)]
pub(super) struct ModelFacts {
    /// `general.name` (may be empty).
    pub name: String,
    /// The file name.
    pub file_name: String,
    /// `<arch>.pooling_type`, if present.
    pub pooling: Option<Pooling>,
    /// Trained context length.
    pub n_ctx_train: usize,
}

/// Picks the profile: the forced one if `forced` is non-empty, else the
/// family whose marker appears in the model or file name, else one derived
/// from the GGUF alone. The cut never exceeds the trained context.
pub(super) fn detect(facts: &ModelFacts, forced: &str) -> Result<EmbeddingProfile, String> {
    let haystack = format!("{} {}", facts.name, facts.file_name).to_lowercase();
    let family = if forced.is_empty() {
        FAMILIES.iter().find(|f| haystack.contains(f.1))
    } else if forced == "gguf" {
        None
    } else {
        Some(FAMILIES.iter().find(|f| f.0 == forced).ok_or_else(|| {
            format!(
                "unknown embedding profile {forced:?}; known: {}",
                known_profiles().join(", ")
            )
        })?)
    };
    let ctx_cap = if facts.n_ctx_train > 0 {
        facts.n_ctx_train
    } else {
        512
    };
    Ok(match family {
        Some((name, _, pooling, max_tokens, query, document)) => EmbeddingProfile {
            name: (*name).to_owned(),
            // The GGUF's own pooling wins when present: it is what the
            // converter read from the model's pooling config.
            pooling: facts.pooling.unwrap_or(*pooling),
            normalize: true,
            max_tokens: (*max_tokens).min(ctx_cap),
            query_prefix: (*query).to_owned(),
            document_prefix: (*document).to_owned(),
        },
        None => EmbeddingProfile {
            name: "gguf".to_owned(),
            pooling: facts.pooling.unwrap_or(Pooling::Mean),
            normalize: true,
            max_tokens: ctx_cap.min(2048),
            query_prefix: String::new(),
            document_prefix: String::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(name: &str, file: &str, pooling: Option<Pooling>, ctx: usize) -> ModelFacts {
        ModelFacts {
            name: name.into(),
            file_name: file.into(),
            pooling,
            n_ctx_train: ctx,
        }
    }

    #[test]
    fn minilm_gets_mean_pooling_and_the_256_cut() {
        let p = detect(
            &facts(
                "all-MiniLM-L6-v2",
                "all-minilm-l6-v2-f16.gguf",
                Some(Pooling::Mean),
                512,
            ),
            "",
        )
        .unwrap();
        assert_eq!(
            (p.name.as_str(), p.pooling, p.max_tokens, p.normalize),
            ("minilm", Pooling::Mean, 256, true)
        );
        assert!(p.query_prefix.is_empty());
    }

    #[test]
    fn qwen3_uses_last_token_and_a_query_instruction() {
        let p = detect(
            &facts(
                "Qwen3 Embedding 0.6B",
                "qwen3-embedding-0.6b.gguf",
                Some(Pooling::Last),
                32768,
            ),
            "",
        )
        .unwrap();
        assert_eq!(p.pooling, Pooling::Last);
        assert!(p.query_prefix.starts_with("Instruct:"));
        assert!(p.document_prefix.is_empty());
    }

    #[test]
    fn unknown_models_follow_their_gguf() {
        let p = detect(&facts("mystery", "m.gguf", Some(Pooling::Cls), 128), "").unwrap();
        assert_eq!(
            (p.name.as_str(), p.pooling, p.max_tokens),
            ("gguf", Pooling::Cls, 128)
        );
    }

    #[test]
    fn forced_profiles_and_their_errors() {
        let f = facts("mystery", "m.gguf", None, 512);
        assert_eq!(detect(&f, "e5").unwrap().document_prefix, "passage: ");
        assert_eq!(detect(&f, "gguf").unwrap().name, "gguf");
        assert!(detect(&f, "nope")
            .unwrap_err()
            .contains("unknown embedding profile"));
    }

    #[test]
    fn gguf_pooling_values() {
        assert_eq!(Pooling::from_gguf(1), Some(Pooling::Mean));
        assert_eq!(Pooling::from_gguf(3), Some(Pooling::Last));
        assert_eq!(Pooling::from_gguf(0), None);
    }
}

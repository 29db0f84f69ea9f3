//! Grammar-constrained sampling, grammar checked lazily.
//!
//! Running the grammar over the whole vocabulary (49,152 candidates for
//! SmolLM2) for every token costs more than the model's own forward pass
//! on one core: llama.cpp decodes every candidate's text and walks the
//! grammar stacks for each. So, like llama.cpp's own `common_sampler`:
//! the token is first drawn *without* the grammar, then checked alone
//! against it; only when the grammar rejects it are the full candidates
//! filtered and the token drawn again. The outcome is a token the grammar
//! allows either way (so a finished answer is schema-shaped JSON), and
//! inside strings, where nearly every token is allowed, the full pass
//! almost never runs.
//!
//! A mild repetition penalty sits in the chain: a 135M model asked to
//! summarise repetitive text tends to loop inside a JSON string until the
//! token cap (shared/models/README.md, "Verification"), and an answer cut
//! at the cap is lost.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use super::client::LlmError;

/// Tokens the repetition penalty looks back over.
const PENALTY_LAST_N: i32 = 64;
/// The repetition penalty (1.0: none; llama.cpp's long-time default).
const PENALTY_REPEAT: f32 = 1.1;
/// Candidates kept before the temperature.
const TOP_K: i32 = 40;

/// How the next token is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sampling {
    /// 0: greedy.
    pub(super) temperature: f32,
    /// Seed of the random draw.
    pub(super) seed: u32,
}

/// A grammar and the sampling chain it constrains.
pub(super) struct GrammarSampler {
    grammar: LlamaSampler,
    chain: LlamaSampler,
    /// Draws the grammar rejected (the full pass ran).
    pub(super) resampled: usize,
}

impl GrammarSampler {
    /// A sampler for `grammar` (GBNF, start rule `root`).
    pub(super) fn new(
        model: &LlamaModel,
        grammar: &str,
        sampling: Sampling,
    ) -> Result<Self, LlmError> {
        let grammar = LlamaSampler::grammar(model, grammar, "root")
            .map_err(|e| LlmError::Generation(e.to_string()))?;
        let penalties =
            LlamaSampler::penalties(model.n_vocab(), PENALTY_LAST_N, PENALTY_REPEAT, 0.0, 0.0);
        let chain = if sampling.temperature > 0.0 {
            LlamaSampler::chain_simple([
                penalties,
                LlamaSampler::top_k(TOP_K),
                LlamaSampler::temp(sampling.temperature),
                LlamaSampler::dist(sampling.seed),
            ])
        } else {
            LlamaSampler::chain_simple([penalties, LlamaSampler::greedy()])
        };
        Ok(Self {
            grammar,
            chain,
            resampled: 0,
        })
    }

    /// Draws and accepts the token after output `idx` of the last decode.
    pub(super) fn sample(
        &mut self,
        ctx: &LlamaContext<'_>,
        idx: i32,
    ) -> Result<LlamaToken, LlmError> {
        let mut candidates = ctx.token_data_array_ith(idx);
        self.chain.apply(&mut candidates);
        let drawn = selected(&candidates)?;
        let token = if self.allows(drawn) {
            drawn
        } else {
            self.resampled += 1;
            let mut candidates = ctx.token_data_array_ith(idx);
            self.grammar.apply(&mut candidates);
            self.chain.apply(&mut candidates);
            selected(&candidates)?
        };
        self.grammar.accept(token);
        self.chain.accept(token);
        Ok(token)
    }

    /// Whether the grammar allows `token` next.
    fn allows(&mut self, token: LlamaToken) -> bool {
        let mut single =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
        self.grammar.apply(&mut single);
        single.data.first().is_some_and(|d| d.logit().is_finite())
    }
}

fn selected(candidates: &LlamaTokenDataArray) -> Result<LlamaToken, LlmError> {
    candidates
        .selected_token()
        .ok_or_else(|| LlmError::Generation("the sampler selected no token".to_owned()))
}

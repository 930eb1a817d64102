//! What a line says an API response cost in tokens ([`Usage`]), in one shape for every agent: the
//! formats read their own fields and hand them to the normalisers here.
//!
//! The buckets are disjoint, as Anthropic bills them: `input` is the input that was neither read
//! from nor written to a cache, `output` includes reasoning (OpenAI and Gemini report reasoning
//! apart, or inside output; it is billed as output either way), and `reasoning` says how much of
//! `output` it was.

use serde_json::Value;

/// The input sizes at which providers' long-context prices start (litellm's `above_<N>k_tokens`
/// tiers, and a margin of sizes they have used): `usage_sums` keeps a response's context as the
/// largest of these it was over, so that a report prices the sums of any table whose sizes are
/// among them. A table with another size is priced from the ledger's rows instead.
pub const CONTEXT_SIZES: [u64; 7] = [100_000, 128_000, 200_000, 256_000, 272_000, 400_000, 1_000_000];

/// [`CONTEXT_SIZES`] as `scrollback_meta` records the sizes `usage_sums` was made with.
pub fn context_sizes_text() -> String {
    CONTEXT_SIZES.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// The SQL expression of the largest of `sizes` that the input of a `usage` row `u` was over, else 0.
pub fn over_sql(sizes: &[u64]) -> String {
    if sizes.is_empty() {
        return "0".to_owned();
    }
    let ctx = "(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens)";
    let arms: String = sizes.iter().rev().map(|n| format!(" WHEN {ctx} > {n} THEN {n}")).collect();
    format!("CASE{arms} ELSE 0 END")
}

/// The largest count of one bucket of one response that is recorded, about 1.1 trillion tokens (2^40):
/// a larger one (a hostile or broken line) is taken as this. No model's context is within a factor
/// of a hundred thousand of it, and sums of millions of such counts still fit in 64 bits.
pub const MAX_TOKENS: u64 = 1 << 40;

/// The SQL sum of the count column `column` that cannot fail: SQLite's `sum()` raises "integer
/// overflow" past 2^63, `total()` never does (it adds in floating point, exact while the sum is
/// below 2^53), and the cast back to an integer saturates at the largest one.
pub fn sum_sql(column: &str) -> String {
    format!("CAST(total({column}) AS INTEGER)")
}

/// The six token columns of a ledger table (or of its sums) aliased `alias`, each summed by
/// [`sum_sql`], in the ledger's order: input, output, cache read, cache write, 1-hour cache write,
/// reasoning.
pub fn token_sums_sql(alias: &str) -> String {
    ["input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning"]
        .map(|c| sum_sql(&format!("{alias}.{c}_tokens")))
        .join(", ")
}

/// Token counts of one API response (or, for Codex's running totals, of a thread so far).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tokens {
    /// Input neither read from nor written to a cache.
    pub input: u64,
    /// Output, reasoning included.
    pub output: u64,
    /// Input read from a cache.
    pub cache_read: u64,
    /// Input written to a cache, both lifetimes.
    pub cache_write: u64,
    /// Of `cache_write`, written for an hour (Anthropic's 1-hour cache; the rest is 5 minutes).
    pub cache_write_1h: u64,
    /// Of `output`, reasoning.
    pub reasoning: u64,
}

impl Tokens {
    /// Every token, each counted once.
    pub fn total(&self) -> u64 {
        self.context().saturating_add(self.output)
    }

    /// The input side of the request: what a provider's long-context price tier looks at.
    pub fn context(&self) -> u64 {
        self.input.saturating_add(self.cache_read).saturating_add(self.cache_write)
    }

    /// Each count at most [`MAX_TOKENS`] (a bucket a format adds up from two counts may be more).
    pub fn clamped(self) -> Tokens {
        let c = |n: u64| n.min(MAX_TOKENS);
        Tokens {
            input: c(self.input),
            output: c(self.output),
            cache_read: c(self.cache_read),
            cache_write: c(self.cache_write),
            cache_write_1h: c(self.cache_write_1h),
            reasoning: c(self.reasoning),
        }
    }

    /// `self - before`, if no count went down (a running total that went on), else `None` (it
    /// started again).
    pub fn since(&self, before: &Tokens) -> Option<Tokens> {
        Some(Tokens {
            input: self.input.checked_sub(before.input)?,
            output: self.output.checked_sub(before.output)?,
            cache_read: self.cache_read.checked_sub(before.cache_read)?,
            cache_write: self.cache_write.checked_sub(before.cache_write)?,
            cache_write_1h: self.cache_write_1h.checked_sub(before.cache_write_1h)?,
            reasoning: self.reasoning.checked_sub(before.reasoning)?,
        })
    }
}

/// One API response's usage, as one line states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// The response's identity, the same in every line, file and session that repeats it
    /// (`claude:<message.id>`, `gemini:<id>`; Codex's: see [`Usage::running`]).
    pub key: String,
    /// The API request's id, where the line gives one (Claude's `requestId`).
    pub request_id: Option<String>,
    /// The model that answered, where the line names it.
    pub model: Option<String>,
    /// When, where the line says (else the entry's own timestamp is taken).
    pub timestamp: Option<String>,
    /// The counts.
    pub tokens: Tokens,
    /// The service tier or speed the response was served at, where it changes the price
    /// (`priority`, `batch`, `flex`, `fast`); `None` for standard.
    pub tier: Option<String>,
    /// Codex: the thread's running total after this response, which the line states instead of
    /// the response's own counts; the writer takes the difference from the file's previous total.
    pub running: Option<Tokens>,
}

/// A count at `key` of `v`: a non-negative integer (a float or a numeric string is taken too; a
/// negative or other value counts 0), at most [`MAX_TOKENS`].
pub(crate) fn count(v: &Value, key: &str) -> u64 {
    let n = match v.get(key) {
        Some(Value::Number(n)) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)).unwrap_or(0)
        }
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    };
    n.min(MAX_TOKENS)
}

/// Anthropic's `usage` object: `input_tokens`, `output_tokens`, `cache_read_input_tokens`,
/// `cache_creation_input_tokens` (with `cache_creation.ephemeral_1h_input_tokens` where the line
/// says), and the price tier (`service_tier` other than `standard`, or `speed` other than
/// `standard`/`normal`).
pub(crate) fn anthropic(usage: &Value) -> (Tokens, Option<String>) {
    let split = usage.get("cache_creation").unwrap_or(&Value::Null);
    let one_hour = count(split, "ephemeral_1h_input_tokens");
    let five_min = count(split, "ephemeral_5m_input_tokens");
    let cache_write = count(usage, "cache_creation_input_tokens").max(one_hour + five_min);
    let tokens = Tokens {
        input: count(usage, "input_tokens"),
        output: count(usage, "output_tokens"),
        cache_read: count(usage, "cache_read_input_tokens"),
        cache_write,
        cache_write_1h: one_hour.min(cache_write),
        reasoning: 0,
    };
    let tier = |key: &str, plain: &[&str]| {
        usage.get(key).and_then(Value::as_str).filter(|t| !t.is_empty() && !plain.contains(t)).map(str::to_owned)
    };
    (tokens, tier("speed", &["standard", "normal"]).or_else(|| tier("service_tier", &["standard"])))
}

/// OpenAI's counts as Codex writes them: `input_tokens` (of which `cached_input_tokens` were read
/// from the cache), `output_tokens` (of which `reasoning_output_tokens` were reasoning), and
/// `cache_write_input_tokens` where a build writes it.
pub(crate) fn openai(usage: &Value) -> Tokens {
    let input = count(usage, "input_tokens");
    let cached = count(usage, "cached_input_tokens").min(input);
    let written = count(usage, "cache_write_input_tokens").min(input - cached);
    Tokens {
        input: input - cached - written,
        output: count(usage, "output_tokens"),
        cache_read: cached,
        cache_write: written,
        cache_write_1h: 0,
        reasoning: count(usage, "reasoning_output_tokens"),
    }
}

/// Gemini CLI's `tokens`: `input` (the prompt, of which `cached` came from the cache), `output`
/// (the candidates), `thoughts` (billed as output), `tool` (the tool-use prompt, billed as input).
pub(crate) fn gemini(tokens: &Value) -> Tokens {
    let prompt = count(tokens, "input");
    let cached = count(tokens, "cached").min(prompt);
    let thoughts = count(tokens, "thoughts");
    Tokens {
        input: prompt - cached + count(tokens, "tool"),
        output: count(tokens, "output") + thoughts,
        cache_read: cached,
        cache_write: 0,
        cache_write_1h: 0,
        reasoning: thoughts,
    }
}

/// Qwen Code's `usageMetadata`: the Gemini API's counts of one response (`promptTokenCount`, of
/// which `cachedContentTokenCount` came from the cache; `toolUsePromptTokenCount`, billed as input;
/// `candidatesTokenCount`, `thoughtsTokenCount`, `totalTokenCount`) as Qwen Code fills them from
/// every provider. Output is what Qwen Code takes it to be (`getUsageOutputTokenCountForPromptEstimate`):
/// the total less the prompt where both are given (an OpenAI-compatible provider's candidates
/// already hold its reasoning, Gemini's do not), else the candidates, with the thoughts added when
/// they are more than the candidates. The earliest JSONL's summarised shape (`input`, `output`,
/// `cached`, `thoughts`, `tool`, `total`) is Gemini CLI's ([`gemini`]).
pub(crate) fn qwen(metadata: &Value) -> Tokens {
    if metadata.get("promptTokenCount").is_none() && metadata.get("input").is_some() {
        return gemini(metadata);
    }
    let prompt = count(metadata, "promptTokenCount");
    let cached = count(metadata, "cachedContentTokenCount").min(prompt);
    let tool = count(metadata, "toolUsePromptTokenCount");
    let candidates = count(metadata, "candidatesTokenCount");
    let thoughts = count(metadata, "thoughtsTokenCount");
    let total = count(metadata, "totalTokenCount");
    let output = match metadata.get("totalTokenCount").is_some() && metadata.get("promptTokenCount").is_some() {
        true if total >= prompt + tool => total - prompt - tool,
        _ if candidates > thoughts => candidates,
        _ => candidates + thoughts,
    };
    Tokens {
        input: prompt - cached + tool,
        output,
        cache_read: cached,
        cache_write: 0,
        cache_write_1h: 0,
        reasoning: thoughts.min(output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_counts_keep_the_one_hour_cache_apart_and_name_a_paid_tier() {
        let (t, tier) = anthropic(&json!({
            "input_tokens": 4, "output_tokens": 190, "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 30,
            "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20},
            "service_tier": "standard"
        }));
        assert_eq!(
            t,
            Tokens { input: 4, output: 190, cache_read: 100, cache_write: 30, cache_write_1h: 20, reasoning: 0 }
        );
        assert_eq!(tier, None);
        let (_, tier) = anthropic(&json!({"service_tier": "priority"}));
        assert_eq!(tier.as_deref(), Some("priority"));
        let (_, tier) = anthropic(&json!({"service_tier": "standard", "speed": "fast"}));
        assert_eq!(tier.as_deref(), Some("fast"));
        let (t, _) = anthropic(&json!({"input_tokens": "7", "output_tokens": -3, "cache_read_input_tokens": null}));
        assert_eq!(t, Tokens { input: 7, ..Tokens::default() }, "odd values count what they can, never below 0");
    }

    #[test]
    fn openai_and_gemini_cached_input_is_taken_out_of_input() {
        let t = openai(&json!({"input_tokens": 1000, "cached_input_tokens": 600, "output_tokens": 50,
                               "reasoning_output_tokens": 20, "total_tokens": 1050}));
        assert_eq!(t, Tokens { input: 400, output: 50, cache_read: 600, reasoning: 20, ..Tokens::default() });
        assert_eq!(t.total(), 1050, "the same total as the line's");
        let t = gemini(&json!({"input": 900, "output": 40, "cached": 300, "thoughts": 25, "tool": 5, "total": 970}));
        assert_eq!(t, Tokens { input: 605, output: 65, cache_read: 300, reasoning: 25, ..Tokens::default() });
        assert_eq!(t.total(), 970);
    }

    #[test]
    fn qwen_output_is_the_total_less_the_prompt_and_the_cached_prompt_is_taken_out_of_input() {
        // An OpenAI-compatible provider: the candidates hold the reasoning.
        let t = qwen(&json!({"promptTokenCount": 5210, "candidatesTokenCount": 96, "totalTokenCount": 5306,
                             "cachedContentTokenCount": 4800, "thoughtsTokenCount": 18}));
        assert_eq!(t, Tokens { input: 410, output: 96, cache_read: 4800, reasoning: 18, ..Tokens::default() });
        assert_eq!(t.total(), 5306);
        // Gemini's API: the thoughts apart from the candidates, and a tool-use prompt.
        let t = qwen(&json!({"promptTokenCount": 1000, "candidatesTokenCount": 40, "thoughtsTokenCount": 60,
                             "toolUsePromptTokenCount": 5, "totalTokenCount": 1105}));
        assert_eq!(t, Tokens { input: 1005, output: 100, reasoning: 60, ..Tokens::default() });
        // No total: the thoughts are added where the candidates cannot hold them.
        assert_eq!(qwen(&json!({"candidatesTokenCount": 10, "thoughtsTokenCount": 30})).output, 40);
        assert_eq!(qwen(&json!({"candidatesTokenCount": 30, "thoughtsTokenCount": 10})).output, 30);
        // The earliest JSONL's summarised shape.
        assert_eq!(qwen(&json!({"input": 900, "output": 40, "cached": 300, "thoughts": 25})).output, 65);
    }

    #[test]
    fn a_running_total_that_went_down_started_again() {
        let a = Tokens { input: 10, output: 5, ..Tokens::default() };
        let b = Tokens { input: 15, output: 9, ..Tokens::default() };
        assert_eq!(b.since(&a), Some(Tokens { input: 5, output: 4, ..Tokens::default() }));
        assert_eq!(a.since(&b), None);
    }
}

//! What a response cost: the pricing table shipped in the binary (`prices.json`, made from
//! litellm's model price list by `scripts/prices.py`, which names the release it was taken from),
//! or a file in the same shape that overrides it model by model (`--prices FILE`).
//!
//! A model, tier or bucket with no price is unpriced, never free: [`Prices::cost`] gives `None`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use scrollback_core::error::{Error, Result};
use scrollback_core::format::Tokens;

/// The table shipped in the binary.
pub const SHIPPED: &str = include_str!("../prices.json");

/// Prices per token of one bucket each; `None` where the source gives none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Input neither read from nor written to a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// Output, reasoning included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// Input read from a cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Input written to a 5-minute cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<f64>,
    /// Input written to a 1-hour cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
}

/// A provider's higher prices for a request whose input is over a size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongContext {
    /// The input size (cached and uncached) above which every token of the request is priced so.
    pub above_tokens: u64,
    /// The prices.
    #[serde(flatten)]
    pub rates: Rates,
}

/// One model's prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPrices {
    /// The entry of the source it was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The provider the source lists it under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Standard prices.
    #[serde(flatten)]
    pub rates: Rates,
    /// Long-context prices, where the provider has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<LongContext>,
    /// Prices of other service tiers (`priority`, `batch`, `flex`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tiers: BTreeMap<String, Rates>,
}

/// A pricing table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// Where the prices come from.
    pub source: String,
    /// When they were taken from it.
    pub taken: String,
    /// Prices by model name.
    pub models: BTreeMap<String, ModelPrices>,
}

/// A response's counts, with what its price depends on besides the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Priced {
    /// The counts (of one response, or a sum of responses that share the rest).
    pub tokens: Tokens,
    /// Whether the request's input was over the model's long-context size.
    pub long: bool,
}

impl Prices {
    /// The table shipped in the binary.
    pub fn shipped() -> Prices {
        serde_json::from_str(SHIPPED).expect("prices.json is valid (tested)")
    }

    /// The shipped table with the models of the file at `path` put in place of (or beside) its own.
    pub fn with_file(path: &Path) -> Result<Prices> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let file: Prices = serde_json::from_str(&text)
            .map_err(|e| Error::BadQuery(format!("{}: not a pricing table: {e}", path.display())))?;
        let mut prices = Prices::shipped();
        prices.source = format!("{} (with {} from {})", prices.source, file.source, path.display());
        prices.models.extend(file.models);
        Ok(prices)
    }

    /// The prices of `model`: its own name, else without a provider's prefix (`anthropic/…`), else
    /// without a date suffix (`-20250514`) or a `-latest`.
    pub fn model(&self, model: &str) -> Option<&ModelPrices> {
        let bare = model.rsplit('/').next().unwrap_or(model);
        let undated = bare
            .strip_suffix("-latest")
            .or_else(|| {
                let (head, tail) = bare.rsplit_once('-')?;
                (tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit())).then_some(head)
            })
            .unwrap_or(bare);
        [model, bare, undated].into_iter().find_map(|name| self.models.get(name))
    }

    /// The input sizes at which some model's long-context prices start, for grouping responses.
    pub fn long_context_sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> =
            self.models.values().filter_map(|m| m.long_context.as_ref().map(|l| l.above_tokens)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// What `priced` cost at `model`'s prices in `tier` (`None`: standard), in USD; `None` when
    /// the model, the tier or a bucket that has tokens has no price.
    pub fn cost(&self, model: Option<&str>, tier: Option<&str>, priced: &Priced) -> Option<f64> {
        let m = self.model(model?)?;
        let t = &priced.tokens;
        let rates = match tier {
            None => match (&m.long_context, priced.long) {
                (Some(long), true) => merged(&long.rates, &m.rates),
                _ => m.rates.clone(),
            },
            Some(tier) => merged(m.tiers.get(tier)?, &Rates::default()),
        };
        let part = |tokens: u64, rate: Option<f64>| -> Option<f64> {
            if tokens == 0 { Some(0.0) } else { rate.map(|r| tokens as f64 * r) }
        };
        let one_hour = t.cache_write_1h.min(t.cache_write);
        Some(
            part(t.input, rates.input)?
                + part(t.output, rates.output)?
                + part(t.cache_read, rates.cache_read)?
                + part(t.cache_write - one_hour, rates.cache_write_5m)?
                // Where the source has no 1-hour price, the 5-minute one (as litellm's users do).
                + part(one_hour, rates.cache_write_1h.or(rates.cache_write_5m))?,
        )
    }
}

/// `over`'s prices, and `under`'s for the buckets `over` has none.
fn merged(over: &Rates, under: &Rates) -> Rates {
    Rates {
        input: over.input.or(under.input),
        output: over.output.or(under.output),
        cache_read: over.cache_read.or(under.cache_read),
        cache_write_5m: over.cache_write_5m.or(under.cache_write_5m),
        cache_write_1h: over.cache_write_1h.or(under.cache_write_1h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses_and_prices_the_models_of_the_corpus() {
        let p = Prices::shipped();
        assert!(p.source.starts_with("litellm "), "{}", p.source);
        for model in ["claude-opus-4-6", "claude-sonnet-4-5-20250929", "claude-sonnet-4-20250514", "gpt-5-codex"] {
            assert!(p.model(model).is_some(), "{model} has no price");
        }
        assert!(p.model("anthropic/claude-opus-4-6").is_some());
        assert!(p.model("claude-sonnet-4-5-latest").is_some());
        assert!(p.model("no-such-model").is_none());
    }

    #[test]
    fn a_cost_is_the_sum_of_its_buckets_and_unpriced_is_never_free() {
        let p = Prices::shipped();
        // ccusage 20.0.24 prices this day of the corpus (claude-sonnet-4-20250514) at $0.5000895.
        let tokens = Tokens { input: 138, output: 5057, cache_read: 348985, cache_write: 85100, ..Tokens::default() };
        let cost = p.cost(Some("claude-sonnet-4-20250514"), None, &Priced { tokens, long: false }).unwrap();
        assert!((cost - 0.5000895).abs() < 1e-9, "{cost}");
        assert_eq!(p.cost(Some("no-such-model"), None, &Priced { tokens, long: false }), None);
        assert_eq!(p.cost(None, None, &Priced { tokens, long: false }), None);
        assert_eq!(
            p.cost(Some("claude-opus-4-6"), Some("fast"), &Priced { tokens, long: false }),
            None,
            "no fast price"
        );
        let long = p.cost(Some("claude-sonnet-4-20250514"), None, &Priced { tokens, long: true }).unwrap();
        assert!(long > cost * 1.4, "long-context prices are higher: {long} vs {cost}");
        let nothing = Priced::default();
        assert_eq!(p.cost(Some("claude-opus-4-6"), None, &nothing), Some(0.0));
    }
}

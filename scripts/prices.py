#!/usr/bin/env python3
"""Writes prices.json, the pricing table scrollback ships, from litellm's model price list.

    python3 -m pip download litellm==VERSION --no-deps -d /tmp/litellm
    python3 scripts/prices.py /tmp/litellm/litellm-VERSION-*.whl > crates/read/prices.json

litellm (PyPI) ships `litellm/model_prices_and_context_window_backup.json`, the list ccusage also
prices from. Kept: the chat models of the providers whose agents scrollback reads (Anthropic, OpenAI,
Google), by their bare names; a Claude model litellm lists only under Amazon Bedrock's name
(`anthropic.<model>-v1:0`) is taken from there, and says so. Prices are USD per token.
"""
import json
import re
import sys
import zipfile
from datetime import date

PATH = "litellm/model_prices_and_context_window_backup.json"
PROVIDERS = {"anthropic", "openai", "gemini", "vertex_ai-language-models"}
AGENT_MODEL = re.compile(r"^(claude|gpt|o\d|codex|gemini)")
BUCKETS = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cache_read": "cache_read_input_token_cost",
    "cache_write_5m": "cache_creation_input_token_cost",
    "cache_write_1h": "cache_creation_input_token_cost_above_1hr",
}
TIERS = {"priority": "_priority", "batch": "_batches", "flex": "_flex"}


def prices(entry, suffix=""):
    out = {}
    for bucket, key in BUCKETS.items():
        value = entry.get(key + suffix)
        if isinstance(value, (int, float)):
            out[bucket] = value
    return out


def long_context(entry):
    """The lowest `above_<N>k_tokens` threshold litellm gives an input price for, and its prices."""
    found = sorted(
        int(m.group(1))
        for k in entry
        if (m := re.fullmatch(r"input_cost_per_token_above_(\d+)k_tokens", k))
    )
    if not found:
        return None
    n = found[0]
    out = {"above_tokens": n * 1000}
    for bucket, key in BUCKETS.items():
        if bucket == "cache_write_1h":
            value = entry.get(f"cache_creation_input_token_cost_above_1hr_above_{n}k_tokens")
        else:
            value = entry.get(f"{key}_above_{n}k_tokens")
        if isinstance(value, (int, float)):
            out[bucket] = value
    return out


def model(entry, source_key):
    out = {"from": source_key, "provider": entry.get("litellm_provider")}
    out.update(prices(entry))
    if (above := long_context(entry)) is not None:
        out["long_context"] = above
    tiers = {name: p for name, suffix in TIERS.items() if (p := prices(entry, suffix))}
    if tiers:
        out["tiers"] = tiers
    return out


def main():
    wheel = sys.argv[1]
    version = re.search(r"litellm-([^-]+)-", wheel).group(1)
    with zipfile.ZipFile(wheel) as z:
        table = json.loads(z.read(PATH))
    models = {}
    for key, entry in table.items():
        if (
            isinstance(entry, dict)
            and "/" not in key
            and entry.get("litellm_provider") in PROVIDERS
            and entry.get("mode", "chat") in ("chat", "responses")
            and AGENT_MODEL.match(key)
            and "input_cost_per_token" in entry
        ):
            models[key] = model(entry, key)
    for key, entry in table.items():
        m = re.fullmatch(r"anthropic\.(claude-[a-z0-9.-]+?)-v\d+:\d+", key)
        if m and m.group(1) not in models and isinstance(entry, dict) and "input_cost_per_token" in entry:
            models[m.group(1)] = model(entry, key)
    out = {
        "source": f"litellm {version} (PyPI), {PATH}",
        "taken": sys.argv[2] if len(sys.argv) > 2 else date.today().isoformat(),
        "unit": "USD per token",
        "models": dict(sorted(models.items())),
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

//! A usage group's figures as the page says them (a group of `/usage.json`: a day, a
//! model, a backend): its tokens, its cost and its cache efficiency.

use serde_json::Value;

use super::words;

/// The group's tokens: its total, or the sum of its kinds when it states none.
pub fn tokens_of(group: &Value) -> u64 {
    let tokens = &group["tokens"];
    tokens["total"].as_u64().unwrap_or_else(|| {
        ["input", "output", "reasoning", "cache_read", "cache_write"]
            .iter()
            .filter_map(|k| tokens[*k].as_u64())
            .sum()
    })
}

/// `$1,058.61`, `≥ $25.54 (some models unpriced)`.
pub fn cost(group: &Value) -> String {
    let money = |usd: f64| {
        let cents = format!("{usd:.2}");
        match cents.split_once('.') {
            Some((whole, fraction)) => match whole.parse::<u64>() {
                Ok(whole) => format!("${}.{fraction}", words::grouped(whole)),
                Err(_) => format!("${cents}"),
            },
            None => format!("${cents}"),
        }
    };
    match group["cost_usd"].as_f64() {
        Some(usd) => money(usd),
        None => format!(
            "≥ {} (some models unpriced)",
            money(group["cost_usd_known"].as_f64().unwrap_or(0.0))
        ),
    }
}

/// `83 %`: the share of input read from the cache, or `–`.
pub fn efficiency(group: &Value) -> String {
    group["cache_efficiency"]
        .as_f64()
        .map_or_else(|| "–".to_string(), |e| format!("{:.0} %", e * 100.0))
}

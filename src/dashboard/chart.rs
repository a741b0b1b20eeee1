//! The usage chart: one bar per day, stacked by backend (the same colour for a backend on
//! every day, the largest over the 30 days first), its legend, and the table behind it
//! for screen readers, with a column per backend. Drawn from `/usage.json`'s
//! `tokens_by_backend`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::html::escape;
use super::usage_figures::{cost, efficiency, tokens_of};
use super::words::{count, grouped};
use crate::usage::stack::Stack;

/// Colours (`b0`…`b5` in the page's style); backends past them share the last as "other".
const COLOURS: usize = 6;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 160;

fn backends(group: &Value) -> impl Iterator<Item = (&str, u64)> {
    group["tokens_by_backend"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(backend, tokens)| (backend.as_str(), tokens.as_u64().unwrap_or(0)))
}

/// `tokens` of `largest` as a height in the chart.
fn scaled(tokens: u64, largest: u64) -> u32 {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let height = ((tokens as f64 / largest.max(1) as f64) * f64::from(HEIGHT)).round() as u32;
    height.min(HEIGHT)
}

/// The chart over `days` (`YYYY-MM-DD`, oldest first), from the day groups by key; a
/// cost column in its table only when the report is `priced`.
pub fn draw(html: &mut String, days: &[String], groups: &BTreeMap<String, &Value>, priced: bool) {
    let stack = Stack::new(groups.values().map(|group| backends(group)), COLOURS);
    let names = stack.names("unknown");
    let largest = days
        .iter()
        .filter_map(|d| groups.get(d).map(|g| tokens_of(g)))
        .max()
        .unwrap_or(0);
    let step = WIDTH / u32::try_from(days.len().max(1)).unwrap_or(1);
    let _ = write!(
        html,
        "<svg viewBox=\"0 0 {WIDTH} {}\" role=\"img\" aria-label=\"tokens per day and backend, last 30 days (table below)\">",
        HEIGHT + 16
    );
    for (i, day) in days.iter().enumerate() {
        let group = groups.get(day).copied();
        let tokens = group.map_or(0, tokens_of);
        let x = u32::try_from(i).unwrap_or(0) * step;
        let _ = write!(
            html,
            "<g class=\"day\" data-day=\"{day}\" data-tokens=\"{tokens}\"><title>{day}: {}</title>",
            count(tokens, "token")
        );
        // Each segment from the rounded running sum, so the bar's height is the total's.
        let mut below = 0u64;
        for (colour, (part, name)) in stack
            .parts(group.into_iter().flat_map(backends))
            .iter()
            .zip(&names)
            .enumerate()
        {
            if *part == 0 {
                continue;
            }
            let bottom = scaled(below, largest);
            below = below.saturating_add(*part);
            let top = scaled(below, largest);
            let _ = write!(
                html,
                "<rect class=\"b{colour}\" data-backend=\"{}\" data-tokens=\"{part}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{day} · {}: {}</title></rect>",
                escape(name),
                x + 1,
                HEIGHT - top,
                step.saturating_sub(2),
                top - bottom,
                escape(name),
                count(*part, "token")
            );
        }
        if i % 5 == 0 {
            let _ = write!(
                html,
                "<text x=\"{x}\" y=\"{}\">{}</text>",
                HEIGHT + 12,
                &day[5..]
            );
        }
        html.push_str("</g>");
    }
    html.push_str("</svg><p class=\"legend\">");
    for (colour, name) in names.iter().enumerate() {
        let _ = write!(
            html,
            "<span data-legend=\"{}\"><span class=\"key k{colour}\"></span> {}</span> ",
            escape(name),
            escape(name)
        );
    }
    html.push_str("</p>");

    html.push_str("<table class=\"sr\"><caption>tokens, calls and cost per day, and tokens per backend</caption><thead><tr><th>day</th><th class=\"n\">calls</th><th class=\"n\">tokens</th>");
    for name in &names {
        let _ = write!(html, "<th class=\"n\">{} tokens</th>", escape(name));
    }
    if priced {
        html.push_str("<th class=\"n\">cost (USD)</th>");
    }
    html.push_str("<th class=\"n\">cache efficiency</th></tr></thead><tbody>");
    for day in days {
        let Some(group) = groups.get(day) else {
            continue;
        };
        let _ = write!(
            html,
            "<tr data-day=\"{day}\"><td>{day}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            grouped(group["calls"].as_u64().unwrap_or(0)),
            grouped(tokens_of(group))
        );
        for part in stack.parts(backends(group)) {
            let _ = write!(html, "<td class=\"n\">{}</td>", grouped(part));
        }
        if priced {
            let _ = write!(html, "<td class=\"n\">{}</td>", escape(&cost(group)));
        }
        let _ = write!(
            html,
            "<td class=\"n\">{}</td></tr>",
            escape(&efficiency(group))
        );
    }
    html.push_str("</tbody></table>");
}

//! What a `--usage` report was asked: its window and grouping, as the report states them.

use super::clock::Day;
use super::tally::By;

/// The window and grouping, as the report states them.
#[derive(Debug, Clone)]
pub struct Query {
    pub by: By,
    pub since: Option<Day>,
    pub until: Option<Day>,
    pub tz_offset_hours: Option<f64>,
    pub reasoning_in_output: bool,
}

//! A bar stacked by backend: which backend gets which colour, the same on every day —
//! the largest over the whole window first; backends past the palette share its last
//! colour as `other`. The terminal's `--by day` bar and the dashboard's chart both use it.

use std::collections::BTreeMap;

pub struct Stack {
    /// Backends with a colour of their own, the largest first.
    named: Vec<String>,
    /// More backends than colours: the rest share the last colour as `other`.
    other: bool,
}

impl Stack {
    /// From every day's `(backend, tokens)`, for a palette of `colours`.
    pub fn new<'a, Day>(days: impl IntoIterator<Item = Day>, colours: usize) -> Stack
    where
        Day: IntoIterator<Item = (&'a str, u64)>,
    {
        let mut sums: BTreeMap<&str, u64> = BTreeMap::new();
        for (backend, tokens) in days.into_iter().flatten() {
            let sum = sums.entry(backend).or_default();
            *sum = sum.saturating_add(tokens);
        }
        let mut order: Vec<(&str, u64)> = sums.into_iter().collect();
        order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let other = order.len() > colours;
        let kept = if other { colours - 1 } else { colours };
        Stack {
            named: order
                .iter()
                .take(kept)
                .map(|(name, _)| (*name).to_string())
                .collect(),
            other,
        }
    }

    /// One day's tokens per colour.
    pub fn parts<'a>(&self, day: impl IntoIterator<Item = (&'a str, u64)>) -> Vec<u64> {
        let mut parts = vec![0u64; self.named.len() + usize::from(self.other)];
        for (backend, tokens) in day {
            let at = self
                .named
                .iter()
                .position(|n| n == backend)
                .unwrap_or(parts.len() - 1);
            parts[at] = parts[at].saturating_add(tokens);
        }
        parts
    }

    /// The names shown, one per colour; a backend with no name is called `unknown`.
    pub fn names<'s>(&'s self, unknown: &'s str) -> Vec<&'s str> {
        self.named
            .iter()
            .map(|n| if n.is_empty() { unknown } else { n.as_str() })
            .chain(self.other.then_some("other"))
            .collect()
    }
}

//! The bars of `--usage`: a value as a run of block characters in eighths of a cell, scaled
//! so the largest row fills the bar, and the same length cut into one segment per part
//! (`--by day`'s backends) when colour can tell the parts apart.

/// Cells of the `--by day` bar when the terminal's width is unknown (`COLUMNS` unset).
pub const DEFAULT_WIDTH: usize = 24;
/// The `--by day` bar never gets narrower than this, however wide the table: a shorter bar
/// cannot show a difference.
pub const MIN_WIDTH: usize = 8;
/// Nor wider: past this a bar is no easier to read, only longer.
pub const MAX_WIDTH: usize = 60;

/// One to seven eighths of a cell, then a whole one.
const PARTS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];

/// The bar's cells for a table `table_width` characters wide: what is left of `columns`
/// after the table and its two-space gap, within [`MIN_WIDTH`, `MAX_WIDTH`];
/// [`DEFAULT_WIDTH`] when the width of the terminal is unknown.
pub fn fit(columns: Option<usize>, table_width: usize) -> usize {
    columns.map_or(DEFAULT_WIDTH, |columns| {
        columns
            .saturating_sub(table_width + 2)
            .clamp(MIN_WIDTH, MAX_WIDTH)
    })
}

/// The terminal's width as the shell exports it (`COLUMNS`).
pub fn columns() -> Option<usize> {
    crate::term::columns_set()
}

/// `value` as eighths of a cell on a bar of `width` cells that `largest` fills.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn eighths(value: u64, largest: u64, width: usize) -> usize {
    if largest == 0 {
        return 0;
    }
    let share = value.min(largest) as f64 / largest as f64;
    (share * (width * 8) as f64).round() as usize
}

/// `count` eighths as whole cells and one partial cell.
fn blocks(count: usize) -> String {
    let mut out = "█".repeat(count / 8);
    if !count.is_multiple_of(8) {
        out.push(PARTS[count % 8 - 1]);
    }
    out
}

/// The bar of one value; a value above zero shows as at least an eighth, so a small day is
/// never mistaken for an empty one.
pub fn total(value: u64, largest: u64, width: usize) -> String {
    blocks(length(value, largest, width))
}

/// The eighths [`total`] draws.
fn length(value: u64, largest: u64, width: usize) -> usize {
    if value == 0 {
        0
    } else {
        eighths(value, largest, width).max(1)
    }
}

/// The bar of the sum of `parts`, cut into one segment per part (in order, some empty): the
/// segments together are exactly [`total`] of the sum. A cell holds one colour, so the
/// boundaries between segments fall on whole cells (the nearest) and only the bar's end
/// keeps its eighth.
pub fn stacked(parts: &[u64], largest: u64, width: usize) -> Vec<String> {
    let sum = parts.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let end = length(sum, largest, width);
    // The end, with its eighth, belongs to the last part that has any.
    let last = parts.iter().rposition(|&p| p > 0).unwrap_or(0);
    let mut segments = Vec::with_capacity(parts.len());
    let mut running = 0u64;
    let mut start = 0;
    for (index, part) in parts.iter().enumerate() {
        running = running.saturating_add(*part);
        let stop = if index >= last {
            end
        } else {
            round_to_cell(eighths(running, largest, width)).clamp(start, end)
        };
        segments.push(blocks(stop - start));
        start = stop;
    }
    segments
}

fn round_to_cell(eighths: usize) -> usize {
    (eighths + 4) / 8 * 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_is_its_share_of_the_largest_in_eighths() {
        // The largest fills the bar, whatever its width.
        assert_eq!(total(500, 500, 24), "█".repeat(24));
        assert_eq!(total(500, 500, 8), "████████");
        assert_eq!(total(250, 500, 8), "████");
        // 1/8 of a cell per eighth: 9, 10, … 15 eighths of 64.
        assert_eq!(total(9, 64, 8), "█▏");
        assert_eq!(total(10, 64, 8), "█▎");
        assert_eq!(total(11, 64, 8), "█▍");
        assert_eq!(total(12, 64, 8), "█▌");
        assert_eq!(total(13, 64, 8), "█▋");
        assert_eq!(total(14, 64, 8), "█▊");
        assert_eq!(total(15, 64, 8), "█▉");
        assert_eq!(total(16, 64, 8), "██");
        // Nothing is nothing; a little is never nothing.
        assert_eq!(total(0, 500, 24), "");
        assert_eq!(total(0, 0, 24), "");
        assert_eq!(total(1, 1_000_000, 24), "▏");
    }

    #[test]
    fn a_stacked_bar_is_as_long_as_the_total_and_cut_on_whole_cells() {
        // 3 + 1 of 8 eighths … on a 4-cell bar that 8 fills: 12 + 4 eighths.
        assert_eq!(stacked(&[3, 1], 4, 4), ["███", "█"]);
        // The end keeps its eighth; the boundary goes to the nearest cell.
        assert_eq!(stacked(&[10, 3], 64, 8), ["█", "▋"]);
        assert_eq!(stacked(&[0, 13], 64, 8), ["", "█▋"]);
        assert_eq!(stacked(&[13, 0], 64, 8), ["█▋", ""]);
        // A part with nothing draws nothing, not even the end's eighth.
        assert_eq!(stacked(&[10, 0], 64, 8), ["█▎", ""]);
        assert_eq!(stacked(&[0, 10, 0], 64, 8), ["", "█▎", ""]);
        assert_eq!(stacked(&[], 64, 8), Vec::<String>::new());
        for parts in [[1u64, 2, 3], [100, 1, 1], [7, 0, 50], [1, 1, 1], [9, 50, 0]] {
            let sum: u64 = parts.iter().sum();
            assert_eq!(
                stacked(&parts, 60, 24).concat(),
                total(sum, 60, 24),
                "{parts:?}"
            );
        }
    }

    #[test]
    fn the_width_fits_the_terminal_within_bounds() {
        assert_eq!(fit(None, 100), DEFAULT_WIDTH);
        assert_eq!(fit(Some(120), 90), 28);
        assert_eq!(fit(Some(80), 90), MIN_WIDTH);
        assert_eq!(fit(Some(500), 90), MAX_WIDTH);
    }
}

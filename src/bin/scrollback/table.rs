//! Text tables for a terminal: the usage report as cells, laid out in columns. It formats only: it
//! reads nothing, and what a report holds is the read crate's.

use std::io::Write;

use scrollback::read::usage::{By, Report, Row};

/// The usage report as cells: a head, a row per group, and the total last.
pub(crate) fn usage_table(report: &Report, by: By) -> Vec<Vec<String>> {
    let name = By::ALL.iter().find(|(_, b)| *b == by).map_or("group", |(n, _)| n);
    let head = [name, "responses", "input", "output", "cache write", "cache read", "total", "cost (USD)"];
    let cells = |row: &Row, label: String| -> Vec<String> {
        let cost = match (row.unpriced_responses, row.responses) {
            (0, _) => format!("{:.2}", row.cost),
            (u, n) if u == n => "unpriced".to_owned(),
            (u, _) => format!("{:.2} +{u} unpriced", row.cost),
        };
        vec![
            label,
            grouped(row.responses),
            grouped(row.input_tokens),
            grouped(row.output_tokens),
            grouped(row.cache_write_tokens),
            grouped(row.cache_read_tokens),
            grouped(row.total_tokens),
            cost,
        ]
    };
    let mut table: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for row in &report.rows {
        let label = match (by, &row.key) {
            (By::Session, Some(id)) => match &row.title {
                Some(title) => {
                    format!("{} {}", id.chars().take(8).collect::<String>(), title.chars().take(40).collect::<String>())
                }
                None => id.clone(),
            },
            (_, Some(key)) => key.clone(),
            (_, None) => "(none)".to_owned(),
        };
        table.push(cells(row, crate::visible::one_line(&label)));
    }
    table.push(cells(&report.total, "total".to_owned()));
    table
}

/// Writes `table` in columns two spaces apart, the first left-aligned and the others right-aligned,
/// with a rule above its last row (the total).
pub(crate) fn write_columns(out: &mut impl Write, table: &[Vec<String>]) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..table.first().map_or(0, Vec::len))
        .map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (i, row) in table.iter().enumerate() {
        if i == table.len() - 1 {
            writeln!(out, "{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "))?;
        }
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| if c == 0 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

/// `n` with a comma between each group of three digits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

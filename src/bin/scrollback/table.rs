//! Text tables for a terminal: the usage report and the overview as cells, laid out in columns. It formats only: it
//! reads nothing, and what a report holds is the read crate's.

use std::io::Write;

use scrollback::read::stats::{Spend, Stats};
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
    columns(out, table, true)
}

/// Writes `table` (its first row the heading) in columns two spaces apart: the columns `right`
/// names (figures) right-aligned, the others (names and texts) left-aligned; no total.
pub(crate) fn write_rows(out: &mut impl Write, table: &[Vec<String>], right: &[usize]) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..table.first().map_or(0, Vec::len))
        .map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| if right.contains(&c) { format!("{cell:>w$}") } else { format!("{cell:<w$}") })
            .collect();
        writeln!(out, "{}", line.join("  ").trim_end())?;
    }
    Ok(())
}

fn columns(out: &mut impl Write, table: &[Vec<String>], total: bool) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..table.first().map_or(0, Vec::len))
        .map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (i, row) in table.iter().enumerate() {
        if total && i == table.len() - 1 {
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

/// A cost as the tables show it.
fn dollars(s: &Spend) -> String {
    match (s.unpriced_responses, s.responses) {
        (0, _) => format!("{:.2}", s.cost),
        (u, n) if u == n => "unpriced".to_owned(),
        (u, _) => format!("{:.2} +{u} unpriced", s.cost),
    }
}

/// `s` on one line, at most `n` characters.
fn short(s: Option<&str>, n: usize) -> String {
    let s = s.unwrap_or("(none)").replace(['\n', '\r', '\t'], " ");
    if s.chars().count() > n { format!("{}…", s.chars().take(n - 1).collect::<String>()) } else { s }
}

/// The overview as a report: the totals, then each figure under a heading.
pub(crate) fn write_stats(out: &mut impl Write, s: &Stats) -> std::io::Result<()> {
    let t = &s.totals;
    let f = &s.filter;
    writeln!(
        out,
        "Overview{}{}{}{} (UTC{:+})",
        f.since.as_deref().map(|d| format!(" from {d}")).unwrap_or_default(),
        f.until.as_deref().map(|d| format!(" to {d}")).unwrap_or_default(),
        f.project.as_deref().map(|p| format!(", project {p}")).unwrap_or_default(),
        f.agent.as_deref().map(|a| format!(", agent {a}")).unwrap_or_default(),
        f.tz_hours
    )?;
    writeln!(
        out,
        "{} sessions, {} messages ({} prompts), {} tokens, ${} cost, {} tool calls ({} failed)",
        grouped(t.sessions),
        grouped(t.messages),
        grouped(t.prompts),
        grouped(t.spend.tokens),
        dollars(&t.spend),
        grouped(t.tool_calls),
        grouped(t.tool_failures)
    )?;
    let section = |out: &mut dyn Write, title: &str| writeln!(out, "\n{title}");
    section(out, "Per day")?;
    let mut table = vec![["day", "sessions", "messages", "tokens", "cost (USD)"].map(String::from).to_vec()];
    for d in &s.days {
        table.push(vec![
            d.day.clone(),
            grouped(d.sessions),
            grouped(d.messages),
            grouped(d.spend.tokens),
            dollars(&d.spend),
        ]);
    }
    columns(out, &table, false)?;
    section(out, "Messages by hour of the day")?;
    let max = s.hours.iter().copied().max().unwrap_or(0).max(1);
    for (h, n) in s.hours.iter().enumerate() {
        let bar = "#".repeat(((*n as f64 / max as f64) * 40.0).round() as usize);
        writeln!(out, "{h:02}  {:>8}  {bar}", grouped(*n))?;
    }
    for (title, list) in [("Top projects", &s.projects), ("Agents", &s.agents)] {
        section(out, title)?;
        let mut table = vec![["name", "sessions", "messages", "tokens", "cost (USD)"].map(String::from).to_vec()];
        for r in list.iter() {
            table.push(vec![
                short(r.name.as_deref(), 60),
                grouped(r.sessions),
                grouped(r.messages),
                grouped(r.spend.tokens),
                dollars(&r.spend),
            ]);
        }
        columns(out, &table, false)?;
    }
    section(out, "Top models")?;
    let mut table = vec![["model", "responses", "tokens", "cost (USD)"].map(String::from).to_vec()];
    for r in &s.models {
        table.push(vec![
            short(r.name.as_deref(), 60),
            grouped(r.spend.responses),
            grouped(r.spend.tokens),
            dollars(&r.spend),
        ]);
    }
    columns(out, &table, false)?;
    section(out, "Tool use")?;
    let mut table = vec![["tool", "calls", "failed", "failure rate"].map(String::from).to_vec()];
    for r in &s.tools {
        table.push(vec![
            short(Some(&r.tool), 40),
            grouped(r.calls),
            grouped(r.failures),
            format!("{:.1}%", r.failure_rate * 100.0),
        ]);
    }
    columns(out, &table, false)?;
    section(out, "Response time (seconds, at most)")?;
    let secs = |v: Option<u32>| v.map_or_else(|| "longer".to_owned(), |v| v.to_string());
    let mut table = vec![["model", "responses", "p50", "p90", "p99"].map(String::from).to_vec()];
    for r in &s.response_times {
        table.push(vec![
            short(Some(r.model.as_deref().unwrap_or("(unknown)")), 60),
            grouped(r.responses),
            secs(r.p50),
            secs(r.p90),
            secs(r.p99),
        ]);
    }
    columns(out, &table, false)?;
    section(out, "Recent edits")?;
    let mut table = vec![["when", "file", "tool", "+", "-"].map(String::from).to_vec()];
    for e in &s.recent_edits {
        table.push(vec![
            e.timestamp.chars().take(16).collect::<String>().replace('T', " "),
            short(Some(&e.path), 70),
            e.tool.clone(),
            grouped(e.added),
            grouped(e.removed),
        ]);
    }
    columns(out, &table, false)?;
    for (title, list) in [("Longest sessions", &s.longest_sessions), ("Costliest sessions", &s.costliest_sessions)] {
        section(out, title)?;
        let mut table =
            vec![["session", "title", "agent", "messages", "tokens", "cost (USD)"].map(String::from).to_vec()];
        for r in list.iter() {
            table.push(vec![
                r.session_id.chars().take(8).collect(),
                short(r.title.as_deref(), 50),
                r.agent.clone(),
                grouped(r.messages),
                grouped(r.spend.tokens),
                dollars(&r.spend),
            ]);
        }
        columns(out, &table, false)?;
    }
    Ok(())
}

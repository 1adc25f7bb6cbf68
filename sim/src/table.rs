//! The one table writer behind every report yard prints (each experiment's, `yard replay`'s and
//! `yard batch run`'s): typed columns — a header, an alignment, the unit a cell's number prints
//! in — and rows of [`Cell`]s, written as a Markdown table whose alignment line aligns each
//! column; and the one way a report is printed ([`Printable`]): with `--json`, the report
//! itself; without, its text.
//!
//! A row type whose table has fixed columns says them once, beside it ([`Row`]); a table
//! whose columns depend on the run (a metric per column, a value per policy) builds its
//! [`Column`]s and adds rows of [`Cell`]s itself. The reports keep their own result structs
//! (their `--json` is a contract); what they share is how a figure becomes text, so that a
//! percentage or a missing value prints the same in every table (and is `null` in the JSON).

use std::borrow::Borrow;
use std::fmt::Write as _;

use serde::Serialize;

/// How a column's numbers print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Text, as given.
    Text,
    /// A whole number: a count, or a mean of counts rounded.
    Count,
    /// A number as Rust prints it (its shortest exact form): a setting echoed back.
    Plain,
    /// A number with this many decimals: seconds, ratios, rates.
    Fixed(usize),
    /// A fraction in percent with this many decimals (0.123 → `12.3`); the header says `%`.
    Percent(usize),
    /// [`Unit::Percent`] followed by ` %`, for a header that names no unit.
    PercentSign(usize),
    /// A difference of fractions in signed percentage points (0.015 → `+1.5`).
    Points(usize),
    /// Bytes in GiB with two decimals and the unit (`1.50 GiB`).
    Gib,
}

impl Unit {
    /// `x` in this unit.
    pub fn format(self, x: f64) -> String {
        match self {
            Unit::Text | Unit::Plain => format!("{x}"),
            Unit::Count => format!("{x:.0}"),
            Unit::Fixed(d) => format!("{x:.d$}"),
            Unit::Percent(d) => format!("{:.d$}", 100.0 * x),
            Unit::PercentSign(d) => format!("{:.d$} %", 100.0 * x),
            Unit::Points(d) => format!("{:+.d$}", 100.0 * x),
            Unit::Gib => format!("{:.2} GiB", x / (1024.0 * 1024.0 * 1024.0)),
        }
    }

    /// Numbers align right; text left.
    fn align(self) -> Align {
        match self {
            Unit::Text => Align::Left,
            _ => Align::Right,
        }
    }
}

/// Where a column's cells sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// One column: its header, unit and alignment, and what a missing value prints as.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    header: String,
    unit: Unit,
    align: Align,
    missing: &'static str,
}

impl Column {
    /// A column of `unit`, aligned as its unit is ([`Unit::align`]), a missing value `–`.
    pub fn new(header: impl Into<String>, unit: Unit) -> Column {
        Column {
            header: header.into(),
            unit,
            align: unit.align(),
            missing: "–",
        }
    }

    /// A text column.
    pub fn text(header: impl Into<String>) -> Column {
        Column::new(header, Unit::Text)
    }

    pub fn left(self) -> Column {
        Column {
            align: Align::Left,
            ..self
        }
    }

    pub fn right(self) -> Column {
        Column {
            align: Align::Right,
            ..self
        }
    }

    /// What a [`Cell::Missing`] prints as, where a table has long printed another mark.
    pub fn missing(self, mark: &'static str) -> Column {
        Column {
            missing: mark,
            ..self
        }
    }

    fn render(&self, cell: &Cell) -> String {
        match cell {
            Cell::Missing => self.missing.to_owned(),
            Cell::Num(x) => self.unit.format(*x),
            Cell::Spread(mean, sd) => {
                format!("{} ± {}", self.unit.format(*mean), self.unit.format(*sd))
            }
            Cell::Text(s) => s.clone(),
            Cell::Blank => String::new(),
            Cell::Joined(parts) => parts
                .iter()
                .map(|p| self.render(p))
                .collect::<Vec<_>>()
                .join(" / "),
        }
    }
}

/// One cell's value, printed in its column's [`Unit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No value (no job to measure it over): the column's mark, `–` unless it says.
    Missing,
    Num(f64),
    /// A mean and its standard deviation over seeds: `mean ± sd`.
    Spread(f64, f64),
    /// Text as it is (a name, or a cell the unit cannot say alone).
    Text(String),
    /// Several values of the column's unit, `a / b / c` (mean / median / p80).
    Joined(Vec<Cell>),
    /// Nothing belongs here (a row of differences has none for a count): `| |`.
    Blank,
}

impl Cell {
    /// The cell as a column of `unit` prints it, for a figure quoted in prose.
    pub fn in_unit(&self, unit: Unit) -> String {
        Column::new("", unit).render(self)
    }
}

impl From<f64> for Cell {
    fn from(x: f64) -> Cell {
        Cell::Num(x)
    }
}

impl From<Option<f64>> for Cell {
    fn from(x: Option<f64>) -> Cell {
        x.map_or(Cell::Missing, Cell::Num)
    }
}

impl From<usize> for Cell {
    fn from(n: usize) -> Cell {
        Cell::Num(n as f64)
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Cell {
        Cell::Num(n as f64)
    }
}

impl From<u32> for Cell {
    fn from(n: u32) -> Cell {
        Cell::Num(f64::from(n))
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_owned())
    }
}

/// A column and how an item of `T` (a report's row) fills it: each column's header beside its
/// value, so the two cannot drift apart.
pub type Field<T> = (Column, fn(&T) -> Cell);

/// A report's row type with fixed columns: its [`Field`]s, kept with the type so that every
/// table of it prints the same columns ([`Table::rows`]).
pub trait Row: Sized {
    fn fields() -> Vec<Field<Self>>;
}

/// A report as a command prints it: with `--json`, the report itself (its `Serialize`: the
/// documented keys, `null` for a missing value); without, its text (what was run, its tables
/// through [`Table`], their notes).
pub trait Printable: Serialize {
    fn text(&self) -> String;

    /// What the command prints: the report's JSON, pretty and ending in a newline, or
    /// `heading` (`## name` and a blank line, or nothing) before its text.
    fn printed(&self, json: bool, heading: &str) -> serde_json::Result<String> {
        Ok(match json {
            true => serde_json::to_string_pretty(self)? + "\n",
            false => format!("{heading}{}", self.text()),
        })
    }
}

/// A table: its columns, then rows of as many cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// A table of `items` (each a `T` or a reference to one), a row each, every column filled
    /// by its field.
    pub fn of<T, I: Borrow<T>>(fields: &[Field<T>], items: impl IntoIterator<Item = I>) -> Table {
        let mut table = Table::new(fields.iter().map(|(c, _)| c.clone()).collect());
        for item in items {
            table.row(fields.iter().map(|(_, cell)| cell(item.borrow())).collect());
        }
        table
    }

    /// A table of `items` in their type's columns ([`Row`]).
    pub fn rows<'a, T: Row + 'a>(items: impl IntoIterator<Item = &'a T>) -> Table {
        Table::of(&T::fields(), items)
    }

    /// Adds a row; it must have a cell for every column (a report's bug otherwise, not input's).
    pub fn row(&mut self, cells: Vec<Cell>) {
        assert_eq!(
            cells.len(),
            self.columns.len(),
            "a row of {} cells in a table of {} columns",
            cells.len(),
            self.columns.len()
        );
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table in Markdown: the header, the alignment line, a line per row, each ending in a
    /// newline.
    pub fn markdown(&self) -> String {
        let mut t = String::new();
        let line = |t: &mut String, cells: &mut dyn Iterator<Item = Option<String>>| {
            t.push('|');
            for c in cells {
                match c {
                    None => t.push_str(" |"),
                    Some(c) => {
                        let _ = write!(t, " {c} |");
                    }
                }
            }
            t.push('\n');
        };
        line(
            &mut t,
            &mut self.columns.iter().map(|c| Some(c.header.clone())),
        );
        t.push('|');
        for c in &self.columns {
            t.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        t.push('\n');
        for row in &self.rows {
            line(
                &mut t,
                &mut self
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(col, c)| (*c != Cell::Blank).then(|| col.render(c))),
            );
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_prints_its_numbers_its_way() {
        assert_eq!(Unit::Count.format(2.0), "2");
        assert_eq!(Unit::Plain.format(100.0), "100");
        assert_eq!(Unit::Plain.format(0.5), "0.5");
        assert_eq!(Unit::Fixed(3).format(1.23456), "1.235");
        assert_eq!(Unit::Percent(1).format(0.1234), "12.3");
        assert_eq!(Unit::Percent(0).format(0.2), "20");
        assert_eq!(Unit::PercentSign(1).format(0.5), "50.0 %");
        assert_eq!(Unit::Points(1).format(0.015), "+1.5");
        assert_eq!(Unit::Points(1).format(-0.2), "-20.0");
        assert_eq!(Unit::Gib.format(1.5 * 1024.0 * 1024.0 * 1024.0), "1.50 GiB");
    }

    #[test]
    fn a_table_prints_as_markdown_with_its_units_alignment_and_missing_marks() {
        let mut t = Table::new(vec![
            Column::text("policy"),
            Column::new("jobs", Unit::Count),
            Column::new("missed %", Unit::Percent(1)),
            Column::new("est. err % mean / median", Unit::Percent(1)).left(),
            Column::new("seeds", Unit::Count),
            Column::new("paper", Unit::Text).missing("—"),
            Column::text("note"),
        ]);
        t.row(vec![
            "dart".into(),
            5usize.into(),
            Some(0.25).into(),
            Cell::Joined(vec![Cell::Num(0.1), Cell::Missing]),
            Cell::Spread(2.0, 1.0),
            Cell::Missing,
            Cell::Blank,
        ]);
        t.row(vec![
            "ps".into(),
            3u64.into(),
            None.into(),
            Cell::Missing,
            Cell::Spread(1.0, 0.0),
            "0.81".into(),
            "x".into(),
        ]);
        assert_eq!(
            t.markdown(),
            "| policy | jobs | missed % | est. err % mean / median | seeds | paper | note |\n\
             |---|---:|---:|---|---:|---|---|\n\
             | dart | 5 | 25.0 | 10.0 / – | 2 ± 1 | — | |\n\
             | ps | 3 | – | – | 1 ± 0 | 0.81 | x |\n"
        );
    }

    #[test]
    fn a_table_of_items_fills_each_column_by_its_field() {
        let fields: &[Field<(&str, f64)>] = &[
            (Column::text("name"), |x| x.0.into()),
            (Column::new("share %", Unit::Percent(1)), |x| x.1.into()),
        ];
        let t = Table::of(fields, [("a", 0.5), ("b", 0.25)]);
        assert_eq!(
            t.markdown(),
            "| name | share % |\n|---|---:|\n| a | 50.0 |\n| b | 25.0 |\n"
        );
    }

    /// A report of rows of fixed columns ([`Row`]), printed both ways.
    #[derive(Serialize)]
    struct Share {
        name: &'static str,
        share: Option<f64>,
        jobs: usize,
    }

    impl Row for Share {
        fn fields() -> Vec<Field<Share>> {
            vec![
                (Column::text("name"), |x| x.name.into()),
                (Column::new("share %", Unit::Percent(1)), |x| x.share.into()),
                (Column::new("jobs", Unit::Count).left(), |x| x.jobs.into()),
            ]
        }
    }

    #[derive(Serialize)]
    struct Shares {
        seed: u64,
        rows: Vec<Share>,
    }

    impl Printable for Shares {
        fn text(&self) -> String {
            format!(
                "seed {}\n\n{}",
                self.seed,
                Table::rows(&self.rows).markdown()
            )
        }
    }

    #[test]
    fn a_report_prints_its_rows_aligned_with_a_mark_for_a_missing_value_or_as_json_with_null() {
        let r = Shares {
            seed: 7,
            rows: vec![
                Share {
                    name: "dart",
                    share: Some(0.125),
                    jobs: 12,
                },
                Share {
                    name: "ps",
                    share: None,
                    jobs: 3,
                },
            ],
        };
        // Text left, numbers right unless the column says; a missing value is its mark.
        assert_eq!(
            r.printed(false, "## shares\n\n").unwrap(),
            "## shares\n\nseed 7\n\n\
             | name | share % | jobs |\n\
             |---|---:|---|\n\
             | dart | 12.5 | 12 |\n\
             | ps | – | 3 |\n"
        );
        // JSON: the report itself, its numbers unrounded, a missing value null.
        assert_eq!(
            r.printed(true, "## shares\n\n").unwrap(),
            "{\n  \"seed\": 7,\n  \"rows\": [\n    {\n      \"name\": \"dart\",\n      \"share\": 0.125,\n      \"jobs\": 12\n    },\n    {\n      \"name\": \"ps\",\n      \"share\": null,\n      \"jobs\": 3\n    }\n  ]\n}\n"
        );
        // A table of owned items and one of references agree.
        let by_reference = Table::rows(&r.rows).markdown();
        assert_eq!(Table::of(&Share::fields(), r.rows).markdown(), by_reference);
    }

    #[test]
    #[should_panic(expected = "a row of 1 cells in a table of 2 columns")]
    fn a_row_short_of_cells_is_a_bug_caught_at_once() {
        let mut t = Table::new(vec![Column::text("a"), Column::text("b")]);
        t.row(vec!["x".into()]);
    }
}

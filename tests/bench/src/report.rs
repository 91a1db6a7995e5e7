//! The result of a benchmark: a table for people, one JSON object with `--json`, and the
//! targets of the project checked against the figures.

use cheesedb::Io;
use serde_json::{json, Map, Value};

use crate::arguments::Sections;
use crate::failure::Failure;
use crate::figures::{Better, Figures, Metric, RecallKind, Unit};
use crate::output::Printer;
use crate::search_corpus::{lots_for, VOCABULARY_WORDS};
use crate::size::Size;

const GIBIBYTE: f64 = 1024.0 * 1024.0 * 1024.0;

/// Everything a benchmark measured, with what is needed to read it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The size that ran.
    pub size: Size,
    /// The sections that ran.
    pub sections: Sections,
    /// How cheesedb reached its files.
    pub io: Io,
    /// The workload's seed.
    pub seed: u64,
    /// The file system under the data folder, where known.
    pub file_system: Option<String>,
    /// The version of SQLite it was compared with, if it was.
    pub sqlite_version: Option<String>,
    /// Each run's figures: cheesedb's, and SQLite's when compared.
    pub runs: Vec<(Figures, Option<Figures>)>,
    /// The median of each figure over the runs.
    pub cheesedb: Figures,
    /// The median of each of SQLite's figures over the runs.
    pub sqlite: Option<Figures>,
}

/// How much better cheesedb did than SQLite on `metric`: above 1 is better, below 1 worse.
pub fn advantage(metric: Metric, cheesedb: f64, sqlite: f64) -> Option<f64> {
    match metric.better() {
        Better::Higher if sqlite > 0.0 => Some(cheesedb / sqlite),
        Better::Lower if cheesedb > 0.0 => Some(sqlite / cheesedb),
        _ => None,
    }
}

/// One of the project's performance targets, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetCheck {
    /// What the target asks.
    pub goal: String,
    /// What was measured, for people.
    pub measured: String,
    /// Whether it was met; `None` when this run could not tell (no SQLite to compare with).
    pub met: Option<bool>,
}

/// The "targets" heading and one line per check, its verdict first.
pub fn target_lines(checks: &[TargetCheck]) -> Vec<String> {
    let mut lines = vec!["targets".to_owned()];
    for check in checks {
        let verdict = match check.met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "unknown",
        };
        lines.push(format!("  {verdict:<8} {}: {}", check.goal, check.measured));
    }
    lines
}

/// Checks the targets of the sections that ran against the medians.
pub fn targets(outcome: &Outcome) -> Vec<TargetCheck> {
    let mut checks = Vec::new();
    if outcome.sections.graph {
        checks.extend(graph_targets(outcome));
    }
    if outcome.sections.search {
        checks.extend(search_targets(outcome));
    }
    checks
}

/// How much better cheesedb did than SQLite on `metric`, when both measured it.
fn compared(outcome: &Outcome, metric: Metric) -> Option<f64> {
    let sqlite = outcome.sqlite.as_ref()?;
    advantage(metric, *outcome.cheesedb.get(&metric)?, *sqlite.get(&metric)?)
}

fn graph_targets(outcome: &Outcome) -> Vec<TargetCheck> {
    let cheesedb = &outcome.cheesedb;
    let mut checks = Vec::new();
    let compared = |metric: Metric| compared(outcome, metric);
    let removed = |kind: RecallKind| cheesedb.get(&Metric::RecallRemoved(kind)).copied().unwrap_or(0.0);
    for kind in RecallKind::ALL {
        let goal = format!(
            "recall removing {} memories ({}): at least 100x faster than SQLite",
            count(removed(kind)),
            kind.title()
        );
        checks.push(ratio_check(goal, compared(Metric::RecallSeconds(kind)), 100.0));
    }
    checks.push(ratio_check(
        "one durable write: at least as fast as SQLite".into(),
        compared(Metric::SingleWritesPerSecond),
        1.0,
    ));
    let single = cheesedb.get(&Metric::SingleWritesPerSecond).copied();
    let threads = cheesedb.get(&Metric::EightThreadsWritesPerSecond).copied();
    let scaling = single.zip(threads).filter(|(single, _)| *single > 0.0).map(|(single, threads)| threads / single);
    let mut scaling_check =
        ratio_check("8 threads on one agent: at least 10x the single-writer rate".into(), scaling, 10.0);
    scaling_check.measured = scaling.map_or_else(|| "not measured".into(), |ratio| format!("{ratio:.2}x"));
    checks.push(scaling_check);
    checks.push(limit_check(
        "open of the agent: at most 0.1 s",
        cheesedb.get(&Metric::AgentOpenSeconds).copied(),
        0.1,
        Unit::Seconds,
    ));
    checks.push(limit_check(
        "RAM: at most 64 bytes per memory",
        cheesedb.get(&Metric::GraphBytesPerMemory).copied(),
        64.0,
        Unit::Bytes,
    ));
    let verify = cheesedb.get(&Metric::VerifyBytesPerSecond).copied();
    checks.push(TargetCheck {
        goal: "verify: at least 1 GiB/s of log".into(),
        measured: verify.map_or_else(|| "not measured".into(), |rate| show(Unit::BytesPerSecond, rate)),
        met: verify.map(|rate| rate >= GIBIBYTE),
    });
    checks
}

fn search_targets(outcome: &Outcome) -> Vec<TargetCheck> {
    let cheesedb = &outcome.cheesedb;
    let search = outcome.size.search;
    let figure = |metric: Metric| cheesedb.get(&metric).copied();
    let memories = count(search.memories as f64);
    let mut checks = vec![ratio_check(
        format!("keyword top 10 at {memories} memories: median at least 10x faster than SQLite FTS5"),
        compared(outcome, Metric::SearchKeywordMedianSeconds),
        10.0,
    )];
    checks.push(limit_check(
        &format!("open of the searched agent ({memories} memories): at most 0.1 s"),
        figure(Metric::SearchAgentOpenSeconds),
        0.1,
        Unit::Seconds,
    ));
    checks.push(limit_check(
        "first search after the open: at most 1 s",
        figure(Metric::SearchFirstSeconds),
        1.0,
        Unit::Seconds,
    ));
    // An index of no bytes after a search of a non-empty corpus is a count the engine does
    // not keep, not a measurement.
    let index = figure(Metric::SearchIndexBytesPerMemory).filter(|bytes| *bytes > 0.0);
    let text = figure(Metric::SearchTextBytesPerMemory);
    checks.push(TargetCheck {
        goal: "index RAM: at most the indexed text".into(),
        measured: match (index, text) {
            (Some(index), Some(text)) => {
                format!("{} against {} per memory", show(Unit::Bytes, index), show(Unit::Bytes, text))
            }
            _ => "not measured".into(),
        },
        met: index.zip(text).map(|(index, text)| index <= text),
    });
    checks.push(limit_check(
        &format!(
            "exact vector top 10 at {} vectors of {} dimensions: median at most 10 ms",
            count(search.vectors as f64),
            search.vector_dimension
        ),
        figure(Metric::VectorMedianSeconds),
        0.01,
        Unit::Seconds,
    ));
    let searched = figure(Metric::SearchWritesPerSecondSearched);
    let unsearched = figure(Metric::SearchWritesPerSecondUnsearched);
    let write_ratio = searched.zip(unsearched).filter(|(_, unsearched)| *unsearched > 0.0).map(|(s, u)| s / u);
    checks.push(TargetCheck {
        goal: "one durable write with the index built: at most 10% slower than without".into(),
        measured: write_ratio
            .map_or_else(|| "not measured".into(), |ratio| format!("{:.1}% of the rate without", ratio * 100.0)),
        met: write_ratio.map(|ratio| ratio >= 0.9),
    });
    checks
}

fn ratio_check(goal: String, ratio: Option<f64>, at_least: f64) -> TargetCheck {
    TargetCheck {
        goal,
        measured: ratio
            .map_or_else(|| "not compared (run with --compare sqlite)".into(), |ratio| format!("{ratio:.2}x")),
        met: ratio.map(|ratio| ratio >= at_least),
    }
}

fn limit_check(goal: &str, value: Option<f64>, at_most: f64, unit: Unit) -> TargetCheck {
    TargetCheck {
        goal: goal.into(),
        measured: value.map_or_else(|| "not measured".into(), |value| show(unit, value)),
        met: value.map(|value| value <= at_most),
    }
}

/// Prints `outcome` as a table, or as one JSON object.
pub fn print(outcome: &Outcome, printer: Printer) -> Result<(), Failure> {
    printer.result(to_json(outcome), || to_text(outcome))
}

fn figures_json(figures: &Figures) -> Value {
    Value::Object(figures.iter().map(|(metric, value)| (metric.key(), json!(value))).collect::<Map<String, Value>>())
}

/// The outcome as one JSON object.
pub fn to_json(outcome: &Outcome) -> Value {
    let shape = outcome.size.shape;
    let ratios: Map<String, Value> = match &outcome.sqlite {
        Some(sqlite) => outcome
            .cheesedb
            .iter()
            .filter_map(|(metric, value)| {
                let ratio = advantage(*metric, *value, *sqlite.get(metric)?)?;
                Some((metric.key(), json!(ratio)))
            })
            .collect(),
        None => Map::new(),
    };
    let targets: Vec<Value> = targets(outcome)
        .into_iter()
        .map(|check| json!({ "goal": check.goal, "measured": check.measured, "met": check.met }))
        .collect();
    let runs: Vec<Value> = outcome
        .runs
        .iter()
        .map(|(cheesedb, sqlite)| json!({ "cheesedb": figures_json(cheesedb), "sqlite": sqlite.as_ref().map(figures_json) }))
        .collect();
    let search = outcome.size.search;
    json!({
        "size": outcome.size.name,
        "sections": { "graph": outcome.sections.graph, "search": outcome.sections.search },
        "memories": shape.memories,
        "lots": shape.lots + shape.families as u64,
        "search": {
            "memories": search.memories,
            "lots": lots_for(search.memories),
            "vocabulary_words": VOCABULARY_WORDS,
            "queries": search.queries,
            "vectors": search.vectors,
            "vector_dimension": search.vector_dimension,
        },
        "io": outcome.io.name(),
        "seed": outcome.seed,
        "file_system": outcome.file_system,
        "sqlite_version": outcome.sqlite_version,
        "run_count": outcome.runs.len(),
        "cheesedb": figures_json(&outcome.cheesedb),
        "sqlite": outcome.sqlite.as_ref().map(figures_json),
        "cheesedb_advantage": ratios,
        "targets": targets,
        "runs": runs,
    })
}

/// The outcome as a table for people.
pub fn to_text(outcome: &Outcome) -> String {
    let shape = outcome.size.shape;
    let mut lines = Vec::new();
    let runs = match outcome.runs.len() {
        1 => "one run".to_owned(),
        count => format!("medians of {count} runs"),
    };
    if outcome.sections.graph {
        lines.push(format!(
            "cheesedb-bench ({}): {} memories and {} lots in one agent; {runs}",
            outcome.size.name,
            count(shape.memories as f64),
            count((shape.lots + shape.families as u64) as f64),
        ));
    }
    if outcome.sections.search {
        let search = outcome.size.search;
        lines.push(format!(
            "cheesedb-bench ({}), search: {} memories and {} lots of 20 to 60 words from {} made-up words \
             (Zipf), {} queries of 1 to 4 words; {} vectors of {} dimensions in another agent; {runs}",
            outcome.size.name,
            count(search.memories as f64),
            count(lots_for(search.memories) as f64),
            count(VOCABULARY_WORDS as f64),
            count(search.queries as f64),
            count(search.vectors as f64),
            search.vector_dimension,
        ));
    }
    let file_system = outcome.file_system.as_deref().unwrap_or("unknown file system");
    let io = match outcome.io {
        Io::Std => "ordinary system calls",
        Io::Uring => "io_uring",
        other => other.name(),
    };
    match &outcome.sqlite_version {
        Some(version) => lines.push(format!(
            "data on {file_system}; cheesedb through {io}; SQLite {version} with WAL, synchronous=FULL, one transaction per write{}",
            if outcome.sections.search { "; FTS5 with bm25()" } else { "" }
        )),
        None => lines.push(format!("data on {file_system}; cheesedb through {io}")),
    }
    lines.push(String::new());
    let compared = outcome.sqlite.is_some();
    let header = if compared {
        format!("{:<38} {:>14} {:>14}  {}", "figure", "cheesedb", "SQLite", "cheesedb vs SQLite")
    } else {
        format!("{:<38} {:>14}", "figure", "cheesedb")
    };
    lines.push(header);
    for (metric, value) in &outcome.cheesedb {
        let unit = metric.unit();
        let mut line = format!("{:<38} {:>14}", metric.title(), show(unit, *value));
        if let Some(sqlite) = &outcome.sqlite {
            let theirs = sqlite.get(metric);
            line.push_str(&format!(" {:>14}", theirs.map_or_else(|| "-".to_owned(), |value| show(unit, *value))));
            if let Some(ratio) = theirs.and_then(|theirs| advantage(*metric, *value, *theirs)) {
                line.push_str(&format!("  {}", advantage_words(*metric, ratio)));
            }
        }
        lines.push(line.trim_end().to_owned());
    }
    lines.push(String::new());
    lines.extend(target_lines(&targets(outcome)));
    lines.join("\n")
}

/// `ratio` (from [`advantage`]) in words: "2.00x faster", "1.50x larger".
pub fn advantage_words(metric: Metric, ratio: f64) -> String {
    let (better, worse) = match metric.unit() {
        Unit::Bytes => ("smaller", "larger"),
        _ => ("faster", "slower"),
    };
    if ratio >= 1.0 {
        format!("{ratio:.2}x {better}")
    } else {
        format!("{:.2}x {worse}", 1.0 / ratio)
    }
}

/// `value` in `unit`, for people.
pub fn show(unit: Unit, value: f64) -> String {
    match unit {
        Unit::PerSecond => format!("{}/s", count(value)),
        Unit::BytesPerSecond => format!("{}/s", bytes(value)),
        Unit::Seconds if value < 1e-3 => format!("{:.1} µs", value * 1e6),
        Unit::Seconds if value < 1.0 => format!("{:.1} ms", value * 1e3),
        Unit::Seconds => format!("{value:.2} s"),
        Unit::Microseconds => format!("{value:.0} µs"),
        Unit::Bytes => bytes(value),
        Unit::Count => count(value),
    }
}

fn bytes(value: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if value < 1024.0 {
        return format!("{value:.1} B");
    }
    let mut scaled = value / 1024.0;
    let mut unit = 0;
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    format!("{scaled:.2} {}", UNITS[unit])
}

/// A whole number with thousands separators.
pub fn count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::SMOKE;

    fn outcome(cheesedb: Figures, sqlite: Option<Figures>) -> Outcome {
        Outcome {
            size: SMOKE,
            sections: Sections { graph: true, search: false },
            io: Io::Std,
            seed: 1,
            file_system: Some("ext4".into()),
            sqlite_version: sqlite.as_ref().map(|_| "3.0".into()),
            runs: vec![(cheesedb.clone(), sqlite.clone())],
            cheesedb,
            sqlite,
        }
    }

    #[test]
    fn numbers_read_easily() {
        assert_eq!(count(1_234_567.4), "1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(show(Unit::Seconds, 0.0123), "12.3 ms");
        assert_eq!(show(Unit::BytesPerSecond, 1.5 * GIBIBYTE), "1.50 GiB/s");
        assert_eq!(show(Unit::Bytes, 48.0), "48.0 B");
    }

    #[test]
    fn advantage_is_above_one_when_cheesedb_does_better() {
        assert_eq!(advantage(Metric::SingleWritesPerSecond, 200.0, 100.0), Some(2.0));
        assert_eq!(advantage(Metric::CompactSeconds, 1.0, 4.0), Some(4.0));
        assert_eq!(advantage(Metric::RecallRemoved(RecallKind::FairErase), 1.0, 1.0), None);
    }

    #[test]
    fn targets_are_checked_against_the_figures() {
        let cheesedb = Figures::from([
            (Metric::RecallSeconds(RecallKind::FairUntrusted), 0.001),
            (Metric::SingleWritesPerSecond, 1_000.0),
            (Metric::EightThreadsWritesPerSecond, 12_000.0),
            (Metric::AgentOpenSeconds, 0.2),
            (Metric::GraphBytesPerMemory, 40.0),
        ]);
        let sqlite = Figures::from([
            (Metric::RecallSeconds(RecallKind::FairUntrusted), 0.5),
            (Metric::SingleWritesPerSecond, 2_000.0),
        ]);
        let checks = targets(&outcome(cheesedb.clone(), Some(sqlite)));
        let met: Vec<Option<bool>> = checks.iter().map(|check| check.met).collect();
        assert_eq!(met, vec![Some(true), None, None, None, Some(false), Some(true), Some(false), Some(true), None]);
        let alone = targets(&outcome(cheesedb, None));
        assert_eq!(alone[0].met, None);
        assert!(alone[0].measured.contains("--compare sqlite"));
    }

    #[test]
    fn search_targets_are_checked_when_the_search_section_ran() {
        let cheesedb = Figures::from([
            (Metric::SearchKeywordMedianSeconds, 0.001),
            (Metric::SearchAgentOpenSeconds, 0.05),
            (Metric::SearchFirstSeconds, 1.5),
            (Metric::SearchIndexBytesPerMemory, 100.0),
            (Metric::SearchTextBytesPerMemory, 280.0),
            (Metric::VectorMedianSeconds, 0.008),
            (Metric::SearchWritesPerSecondUnsearched, 1_000.0),
            (Metric::SearchWritesPerSecondSearched, 850.0),
        ]);
        let sqlite = Figures::from([(Metric::SearchKeywordMedianSeconds, 0.02)]);
        let mut outcome = outcome(cheesedb, Some(sqlite));
        outcome.sections = Sections { graph: false, search: true };
        let checks = targets(&outcome);
        let met: Vec<Option<bool>> = checks.iter().map(|check| check.met).collect();
        assert_eq!(met, vec![Some(true), Some(true), Some(false), Some(true), Some(true), Some(false)]);
        assert_eq!(checks[0].measured, "20.00x");
        assert_eq!(checks[5].measured, "85.0% of the rate without");
        let text = to_text(&outcome);
        assert!(text.contains("search: keyword top 10, median") && !text.contains("recall removing"), "{text}");
        assert_eq!(to_json(&outcome)["search"]["vector_dimension"], json!(384));
    }

    #[test]
    fn the_table_and_the_json_carry_every_figure() {
        let figures = Figures::from([(Metric::SingleWritesPerSecond, 2_500.0), (Metric::DiskBytes, 4096.0)]);
        let outcome = outcome(figures.clone(), Some(figures));
        let text = to_text(&outcome);
        assert!(text.contains("2,500/s"), "{text}");
        assert!(text.contains("1.00x faster"), "{text}");
        let value = to_json(&outcome);
        assert_eq!(value["cheesedb"]["single_writes_per_second"], json!(2_500.0));
        assert_eq!(value["cheesedb_advantage"]["disk_bytes"], json!(1.0));
    }
}

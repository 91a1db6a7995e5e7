//! The result of `cheesedb-bench --encryption`: a table of the plaintext agent, the encrypted
//! agent and SQLite side by side, one JSON object with `--json`, and the encryption targets
//! checked against the figures.

use cheesedb::Io;
use serde_json::{json, Map, Value};

use crate::encryption::EncryptionOutcome;
use crate::failure::Failure;
use crate::figures::{Figures, Metric, RecallKind, Unit};
use crate::output::Printer;
use crate::paired_writes::PairedWrites;
use crate::report::{advantage, advantage_words, count, show, target_lines, TargetCheck};

/// The slowest an encrypted agent's durable writes may be, as a share of a plaintext agent's rate.
const WRITE_RATIO_MIN: f64 = 0.9;
/// "Unchanged", for a recall without Erase: at least this share of the plaintext agent's speed.
const UNCHANGED_RATIO_MIN: f64 = 0.9;
/// The longest open of the encrypted agent, in seconds.
const OPEN_SECONDS_MAX: f64 = 0.15;
/// How much faster than SQLite's with `secure_delete` an Erase on the encrypted agent must be.
const ERASE_ADVANTAGE_MIN: f64 = 10.0;

/// Checks the encryption targets against the medians.
pub fn targets(outcome: &EncryptionOutcome) -> Vec<TargetCheck> {
    let plaintext = &outcome.plaintext;
    let encrypted = &outcome.encrypted;
    let mut checks = vec![write_check(outcome.paired_writes.as_ref())];
    for kind in [RecallKind::FairUntrusted, RecallKind::StrictUntrusted] {
        let metric = Metric::RecallSeconds(kind);
        let ratio = both(encrypted, plaintext, metric).and_then(|(ours, theirs)| advantage(metric, ours, theirs));
        checks.push(TargetCheck {
            goal: format!(
                "recall without Erase ({}) on the encrypted agent: unchanged (at least {UNCHANGED_RATIO_MIN}x the plaintext agent's speed)",
                kind.title()
            ),
            // The dry run is the recall without its durable write, whose flush varies from one
            // call to the next far more than anything encryption could change.
            measured: ratio.map_or_else(
                || "not measured".into(),
                |ratio| {
                    let dry_run = Metric::RecallPreviewSeconds(kind);
                    format!(
                        "{ratio:.2}x ({} against {}; dry runs {} against {})",
                        seconds(encrypted, metric),
                        seconds(plaintext, metric),
                        seconds(encrypted, dry_run),
                        seconds(plaintext, dry_run),
                    )
                },
            ),
            met: ratio.map(|ratio| ratio >= UNCHANGED_RATIO_MIN),
        });
    }
    checks.push(open_check(outcome));
    for kind in [RecallKind::FairErase, RecallKind::StrictErase] {
        checks.push(erase_check(outcome, kind));
    }
    checks
}

fn both(ours: &Figures, theirs: &Figures, metric: Metric) -> Option<(f64, f64)> {
    Some((*ours.get(&metric)?, *theirs.get(&metric)?))
}

fn seconds(figures: &Figures, metric: Metric) -> String {
    figures.get(&metric).map_or_else(|| "-".into(), |value| show(Unit::Seconds, *value))
}

fn write_check(paired: Option<&PairedWrites>) -> TargetCheck {
    let goal = format!(
        "durable writes, one add_lot or remember per call, on the encrypted agent: at least {WRITE_RATIO_MIN}x the plaintext agent's rate"
    );
    let Some(paired) = paired else {
        return TargetCheck { goal, measured: "not measured".into(), met: None };
    };
    let whole = paired.second_per_second / paired.first_per_second.max(f64::MIN_POSITIVE);
    TargetCheck {
        goal,
        measured: format!(
            "{:.2}x (median of {} rounds' ratios; {} against {}, {whole:.2}x over all rounds)",
            paired.round_ratio_median,
            paired.rounds,
            show(Unit::PerSecond, paired.second_per_second),
            show(Unit::PerSecond, paired.first_per_second),
        ),
        met: Some(paired.round_ratio_median >= WRITE_RATIO_MIN),
    }
}

fn open_check(outcome: &EncryptionOutcome) -> TargetCheck {
    let open = outcome.encrypted.get(&Metric::AgentOpenSeconds).copied();
    let replayed = outcome.encrypted.get(&Metric::OpenRecordsReplayed).copied();
    TargetCheck {
        goal: format!(
            "open of the {}-memory encrypted agent after a clean close: at most {OPEN_SECONDS_MAX} s",
            count(outcome.size.shape.memories as f64)
        ),
        measured: open.map_or_else(
            || "not measured".into(),
            |open| {
                format!(
                    "{} ({} records replayed; the plaintext agent: {})",
                    show(Unit::Seconds, open),
                    replayed.map_or_else(|| "-".into(), count),
                    seconds(&outcome.plaintext, Metric::AgentOpenSeconds),
                )
            },
        ),
        met: open.map(|open| open <= OPEN_SECONDS_MAX),
    }
}

fn erase_check(outcome: &EncryptionOutcome, kind: RecallKind) -> TargetCheck {
    let metric = Metric::RecallSeconds(kind);
    let removed = outcome.encrypted.get(&Metric::RecallRemoved(kind)).copied().unwrap_or(0.0);
    let goal = format!(
        "recall removing {} memories ({}) on the encrypted agent: at least {ERASE_ADVANTAGE_MIN}x faster than SQLite with secure_delete",
        count(removed),
        kind.title()
    );
    let against_sqlite = |figures: &Figures| {
        let sqlite = outcome.sqlite.as_ref()?;
        both(figures, sqlite, metric).and_then(|(ours, theirs)| advantage(metric, ours, theirs))
    };
    let Some(ratio) = against_sqlite(&outcome.encrypted) else {
        return TargetCheck { goal, measured: "not compared (run with --compare sqlite)".into(), met: None };
    };
    let plaintext = against_sqlite(&outcome.plaintext).map_or_else(|| "-".into(), |ratio| format!("{ratio:.2}x"));
    TargetCheck {
        goal,
        measured: format!(
            "{ratio:.2}x ({} against {}; the plaintext agent's Erase: {}, {plaintext})",
            seconds(&outcome.encrypted, metric),
            outcome.sqlite.as_ref().map_or_else(|| "-".into(), |sqlite| seconds(sqlite, metric)),
            seconds(&outcome.plaintext, metric),
        ),
        met: Some(ratio >= ERASE_ADVANTAGE_MIN),
    }
}

/// Prints `outcome` as a table, or as one JSON object.
pub fn print(outcome: &EncryptionOutcome, printer: Printer) -> Result<(), Failure> {
    printer.result(to_json(outcome), || to_text(outcome))
}

fn figures_json(figures: &Figures) -> Value {
    Value::Object(figures.iter().map(|(metric, value)| (metric.key(), json!(value))).collect::<Map<String, Value>>())
}

/// For every figure both measured, how much better `ours` did than `theirs`.
fn advantages_json(ours: &Figures, theirs: Option<&Figures>) -> Value {
    let Some(theirs) = theirs else { return Value::Null };
    Value::Object(
        ours.iter()
            .filter_map(|(metric, value)| {
                Some((metric.key(), json!(advantage(*metric, *value, *theirs.get(metric)?)?)))
            })
            .collect(),
    )
}

fn paired_json(paired: &PairedWrites) -> Value {
    json!({
        "rounds": paired.rounds,
        "writes_per_round": paired.writes_per_round,
        "plaintext_per_second": paired.first_per_second,
        "encrypted_per_second": paired.second_per_second,
        "plaintext_median_microseconds": paired.first_median_microseconds,
        "encrypted_median_microseconds": paired.second_median_microseconds,
        "encrypted_ratio_round_median": paired.round_ratio_median,
    })
}

/// The outcome as one JSON object.
pub fn to_json(outcome: &EncryptionOutcome) -> Value {
    let shape = outcome.size.shape;
    let targets: Vec<Value> = targets(outcome)
        .into_iter()
        .map(|check| json!({ "goal": check.goal, "measured": check.measured, "met": check.met }))
        .collect();
    let runs: Vec<Value> = outcome
        .runs
        .iter()
        .map(|run| {
            json!({
                "plaintext": figures_json(&run.plaintext),
                "encrypted": figures_json(&run.encrypted),
                "sqlite": run.sqlite.as_ref().map(figures_json),
                "paired_writes": paired_json(&run.paired_writes),
            })
        })
        .collect();
    json!({
        "size": outcome.size.name,
        "memories": shape.memories,
        "lots": shape.lots + shape.families as u64,
        "io": outcome.io.name(),
        "seed": outcome.seed,
        "file_system": outcome.file_system,
        "sqlite_version": outcome.sqlite_version,
        "run_count": outcome.runs.len(),
        "plaintext": figures_json(&outcome.plaintext),
        "encrypted": figures_json(&outcome.encrypted),
        "sqlite": outcome.sqlite.as_ref().map(figures_json),
        "encrypted_advantage_over_plaintext": advantages_json(&outcome.encrypted, Some(&outcome.plaintext)),
        "encrypted_advantage_over_sqlite": advantages_json(&outcome.encrypted, outcome.sqlite.as_ref()),
        "plaintext_advantage_over_sqlite": advantages_json(&outcome.plaintext, outcome.sqlite.as_ref()),
        "paired_writes": outcome.paired_writes.as_ref().map(paired_json),
        "targets": targets,
        "runs": runs,
    })
}

/// The outcome as a table for people.
pub fn to_text(outcome: &EncryptionOutcome) -> String {
    let shape = outcome.size.shape;
    let runs = match outcome.runs.len() {
        1 => "one run".to_owned(),
        count => format!("medians of {count} runs"),
    };
    let mut lines = vec![format!(
        "cheesedb-bench --encryption ({}): {} memories and {} lots in a plaintext agent and in an encrypted one{}; {runs}",
        outcome.size.name,
        count(shape.memories as f64),
        count((shape.lots + shape.families as u64) as f64),
        if outcome.sqlite.is_some() { ", and in SQLite" } else { "" },
    )];
    let file_system = outcome.file_system.as_deref().unwrap_or("unknown file system");
    let io = match outcome.io {
        Io::Std => "ordinary system calls",
        Io::Uring => "io_uring",
        other => other.name(),
    };
    lines.push(match &outcome.sqlite_version {
        Some(version) => format!(
            "data on {file_system}; cheesedb through {io}; SQLite {version} with WAL, synchronous=FULL, one transaction per write, secure_delete for Erase"
        ),
        None => format!("data on {file_system}; cheesedb through {io}"),
    });
    lines.push(String::new());
    lines.extend(table(outcome));
    if let Some(paired) = &outcome.paired_writes {
        lines.push(String::new());
        lines.push(format!(
            "paired durable writes ({} rounds of {} per agent, half add_lot, half remember, the first agent alternating):",
            paired.rounds, paired.writes_per_round
        ));
        lines.push(format!(
            "  plaintext {} (median {}), encrypted {} (median {}); encrypted over plaintext, median of the rounds: {:.2}x",
            show(Unit::PerSecond, paired.first_per_second),
            show(Unit::Microseconds, paired.first_median_microseconds),
            show(Unit::PerSecond, paired.second_per_second),
            show(Unit::Microseconds, paired.second_median_microseconds),
            paired.round_ratio_median,
        ));
    }
    lines.push(String::new());
    lines.extend(target_lines(&targets(outcome)));
    lines.join("\n")
}

/// Every figure: the three engines' values, then the encrypted agent against the plaintext one
/// and against SQLite.
fn table(outcome: &EncryptionOutcome) -> Vec<String> {
    let sqlite = outcome.sqlite.as_ref();
    let mut header = format!("{:<38} {:>14} {:>14}", "figure", "plaintext", "encrypted");
    if sqlite.is_some() {
        header.push_str(&format!(" {:>14}", "SQLite"));
    }
    header.push_str(&format!("  {:<20}", "encrypted vs plain"));
    if sqlite.is_some() {
        header.push_str("  encrypted vs SQLite");
    }
    let mut lines = vec![header.trim_end().to_owned()];
    for (metric, encrypted) in &outcome.encrypted {
        let unit = metric.unit();
        let shown = |figures: Option<&Figures>| {
            figures.and_then(|figures| figures.get(metric)).map_or_else(|| "-".to_owned(), |value| show(unit, *value))
        };
        let mut line =
            format!("{:<38} {:>14} {:>14}", metric.title(), shown(Some(&outcome.plaintext)), show(unit, *encrypted));
        if sqlite.is_some() {
            line.push_str(&format!(" {:>14}", shown(sqlite)));
        }
        let against = |figures: Option<&Figures>| {
            figures
                .and_then(|figures| figures.get(metric))
                .and_then(|theirs| advantage(*metric, *encrypted, *theirs))
                .map_or_else(String::new, |ratio| advantage_words(*metric, ratio))
        };
        line.push_str(&format!("  {:<20}", against(Some(&outcome.plaintext))));
        if sqlite.is_some() {
            line.push_str(&format!("  {}", against(sqlite)));
        }
        lines.push(line.trim_end().to_owned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::EncryptionRun;
    use crate::size::SMOKE;

    fn paired(ratio: f64) -> PairedWrites {
        PairedWrites {
            rounds: 20,
            writes_per_round: 100,
            first_per_second: 10_000.0,
            second_per_second: 10_000.0 * ratio,
            first_median_microseconds: 90.0,
            second_median_microseconds: 90.0 / ratio,
            round_ratio_median: ratio,
        }
    }

    fn outcome(plaintext: Figures, encrypted: Figures, sqlite: Option<Figures>) -> EncryptionOutcome {
        let paired_writes = paired(0.95);
        EncryptionOutcome {
            size: SMOKE,
            io: Io::Std,
            seed: 1,
            file_system: Some("ext4".into()),
            sqlite_version: sqlite.as_ref().map(|_| "3.0".into()),
            runs: vec![EncryptionRun {
                plaintext: plaintext.clone(),
                encrypted: encrypted.clone(),
                sqlite: sqlite.clone(),
                paired_writes,
            }],
            plaintext,
            encrypted,
            sqlite,
            paired_writes: Some(paired_writes),
        }
    }

    fn recalls(untrusted_seconds: f64, erase_seconds: f64) -> Figures {
        Figures::from([
            (Metric::RecallSeconds(RecallKind::FairUntrusted), untrusted_seconds),
            (Metric::RecallSeconds(RecallKind::StrictUntrusted), untrusted_seconds),
            (Metric::RecallSeconds(RecallKind::FairErase), erase_seconds),
            (Metric::RecallSeconds(RecallKind::StrictErase), erase_seconds),
            (Metric::RecallPreviewSeconds(RecallKind::FairUntrusted), untrusted_seconds / 2.0),
            (Metric::RecallRemoved(RecallKind::FairErase), 10_000.0),
            (Metric::AgentOpenSeconds, 0.05),
        ])
    }

    #[test]
    fn targets_are_checked_against_the_figures() {
        let plaintext = recalls(0.005, 0.2);
        let mut encrypted = recalls(0.006, 0.04);
        encrypted.insert(Metric::AgentOpenSeconds, 0.2);
        let sqlite = recalls(0.5, 0.5);
        let checks = targets(&outcome(plaintext.clone(), encrypted.clone(), Some(sqlite)));
        let met: Vec<Option<bool>> = checks.iter().map(|check| check.met).collect();
        // Writes 0.95x; recalls without Erase 0.83x; open 0.2 s; Erase 12.5x SQLite's.
        assert_eq!(met, vec![Some(true), Some(false), Some(false), Some(false), Some(true), Some(true)]);
        assert!(checks[4].measured.starts_with("12.50x") && checks[4].measured.contains("2.50x"), "{checks:?}");
        assert!(checks[4].goal.contains("10,000 memories"), "{}", checks[4].goal);
        assert!(checks[1].measured.ends_with("dry runs 3.0 ms against 2.5 ms)"), "{}", checks[1].measured);
        let alone = targets(&outcome(plaintext, encrypted, None));
        assert_eq!(alone[4].met, None);
        assert!(alone[4].measured.contains("--compare sqlite"));
    }

    #[test]
    fn the_table_and_the_json_carry_every_engine() {
        let plaintext = Figures::from([(Metric::SingleWritesPerSecond, 2_000.0)]);
        let encrypted = Figures::from([(Metric::SingleWritesPerSecond, 1_900.0)]);
        let sqlite = Figures::from([(Metric::SingleWritesPerSecond, 500.0)]);
        let outcome = outcome(plaintext, encrypted, Some(sqlite));
        let text = to_text(&outcome);
        assert!(text.contains("1,900/s") && text.contains("1.05x slower") && text.contains("3.80x faster"), "{text}");
        assert!(text.contains("median of the rounds: 0.95x"), "{text}");
        let value = to_json(&outcome);
        assert_eq!(value["encrypted"]["single_writes_per_second"], json!(1_900.0));
        assert_eq!(value["encrypted_advantage_over_sqlite"]["single_writes_per_second"], json!(3.8));
        assert_eq!(value["paired_writes"]["encrypted_ratio_round_median"], json!(0.95));
    }
}

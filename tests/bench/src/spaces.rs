//! `cheesedb-bench --spaces`: a recall in a space shared by 8 members, each holding private
//! memories built on the space's memories, beside the same graph in one SQLite database (its
//! nodes of every log in one table, with the same durability) when built with `sqlite`.
//!
//! Timed: the recall of the lot every shared memory rests on, with its members' part (each
//! member open, its part applied before the call returns), Untrusted and then, on a fresh copy
//! of the data, Erase (against SQLite with `secure_delete`); and a member's first answer after a
//! recall it had not applied (the member closed during the recall): its open, which applies the
//! recall, and one `get`. Last, write rates side by side: 8 members writing to the space at once,
//! and 8 threads writing to one agent.

use std::path::Path;
use std::time::{Duration, Instant};

use cheesedb::{Agent, Id, Leg, Mode, Removal, Role, Store};
use serde_json::json;

use crate::failure::Failure;
use crate::figures::median;
use crate::folder::BenchFolder;
use crate::output::Printer;

/// The members of the space (beside its admin).
pub const MEMBERS: usize = 8;

/// How many shared memories, and private memories per member.
#[derive(Debug, Clone, Copy)]
pub struct SpaceSize {
    /// Memories of the space, each on the one lot.
    pub shared: usize,
    /// Private memories of each member, each on one shared memory.
    pub private_per_member: usize,
    /// Lots each of the 8 writers adds when write rates are compared.
    pub writes_per_writer: usize,
}

/// The size the targets name.
pub const FULL: SpaceSize = SpaceSize { shared: 10_000, private_per_member: 10_000, writes_per_writer: 1_000 };
/// A size that only shows every step works.
pub const SMOKE: SpaceSize = SpaceSize { shared: 200, private_per_member: 200, writes_per_writer: 10 };

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct SpaceFigures {
    /// The Untrusted recall, members' part included.
    pub recall_untrusted: Duration,
    /// The Erase recall, members' part included.
    pub recall_erase: Duration,
    /// Memories it removed, in the space and in the members.
    pub removed: usize,
    /// A closed member's open and first answer after the recall.
    pub first_answer: Duration,
    /// The dependents that member's open removed.
    pub first_answer_dependents: usize,
    /// SQLite's Untrusted recall, when compared.
    pub sqlite_untrusted: Option<Duration>,
    /// SQLite's Erase (`secure_delete`) recall, when compared.
    pub sqlite_erase: Option<Duration>,
    /// Memories SQLite removed.
    pub sqlite_removed: Option<usize>,
    /// Writes a second to the space, by `MEMBERS` members on threads of their own.
    pub space_writes_per_second: f64,
    /// Writes a second to one agent, by `MEMBERS` threads sharing its handle.
    pub agent_writes_per_second: f64,
}

/// The store, its space and its open members, built for one measurement.
struct Built {
    store: Store,
    team: cheesedb::Space,
    members: Vec<(Agent, cheesedb::Token)>,
    lot: Id,
}

/// Builds the data in `folder`: the admin's space with one lot and `size.shared` memories on
/// it, and `MEMBERS` members with `size.private_per_member` private memories each, every one on
/// one shared memory; the last member encrypted when `last_encrypted`.
fn build(folder: &Path, size: SpaceSize, last_encrypted: bool) -> Result<Built, Failure> {
    let store = Store::open(folder)?;
    let admin = store.open_agent(&store.create_agent("admin")?)?;
    let team = store.create_space("team", &admin)?;
    let lot = team.add_lot("web", b"the shared source every shared memory rests on")?;
    let mut shared = Vec::with_capacity(size.shared);
    for index in 0..size.shared {
        let content = format!("shared memory {index} learned from the source");
        shared.push(team.remember(content.as_bytes(), &[Leg::from([lot])])?);
    }
    let mut members = Vec::with_capacity(MEMBERS);
    for member in 0..MEMBERS {
        let name = format!("member-{member}");
        let encrypted = last_encrypted && member + 1 == MEMBERS;
        let token = if encrypted { store.create_encrypted_agent(&name)? } else { store.create_agent(&name)? };
        let agent = store.open_agent(&token)?;
        team.grant(&name, Role::Read)?;
        let stands_for = agent.space("team")?.share_all(&shared)?;
        agent.batch(|batch| {
            for index in 0..size.private_per_member {
                let parent = stands_for.get(index % stands_for.len()).copied();
                let content = format!("member {member} private memory {index}");
                batch.remember(content.as_bytes(), &[parent.into_iter().collect::<Leg>()])?;
            }
            Ok(())
        })?;
        members.push((agent, token));
    }
    Ok(Built { store, team, members, lot })
}

/// The recall of the lot, timed, members' part included; returns how many memories it removed.
fn timed_recall(built: &Built, removal: Removal) -> Result<(Duration, usize), Failure> {
    let started = Instant::now();
    let reached = built.team.recall(built.lot, Mode::Fair, removal)?;
    let took = started.elapsed();
    let removed = reached.in_space.len() + reached.in_members.iter().map(|(_, ids)| ids.len()).sum::<usize>();
    Ok((took, removed))
}

/// Runs the measurement `repeat` times and prints the median of each figure, with the range of
/// each ratio over the runs.
pub fn run(
    folder: &BenchFolder,
    size: SpaceSize,
    compare_sqlite: bool,
    repeat: u32,
    printer: Printer,
) -> Result<(), Failure> {
    let runs =
        (1..=repeat.max(1)).map(|run| measure(folder, size, compare_sqlite, run)).collect::<Result<Vec<_>, _>>()?;
    print(&medians(&runs), &runs, size, printer)
}

/// The median of each figure over `runs`.
fn medians(runs: &[SpaceFigures]) -> SpaceFigures {
    let middle = |value: &dyn Fn(&SpaceFigures) -> f64| median(&mut runs.iter().map(value).collect::<Vec<f64>>());
    let duration = |value: &dyn Fn(&SpaceFigures) -> Duration| {
        Duration::from_secs_f64(middle(&|figures| value(figures).as_secs_f64()))
    };
    let compared = |value: &dyn Fn(&SpaceFigures) -> Option<Duration>| {
        runs.iter()
            .all(|figures| value(figures).is_some())
            .then(|| duration(&|figures| value(figures).unwrap_or_default()))
    };
    SpaceFigures {
        recall_untrusted: duration(&|figures| figures.recall_untrusted),
        recall_erase: duration(&|figures| figures.recall_erase),
        removed: runs.first().map_or(0, |figures| figures.removed),
        first_answer: duration(&|figures| figures.first_answer),
        first_answer_dependents: runs.first().map_or(0, |figures| figures.first_answer_dependents),
        sqlite_untrusted: compared(&|figures| figures.sqlite_untrusted),
        sqlite_erase: compared(&|figures| figures.sqlite_erase),
        sqlite_removed: runs.first().and_then(|figures| figures.sqlite_removed),
        space_writes_per_second: middle(&|figures| figures.space_writes_per_second),
        agent_writes_per_second: middle(&|figures| figures.agent_writes_per_second),
    }
}

/// Measures every figure once, in folders numbered `run`.
pub fn measure(folder: &BenchFolder, size: SpaceSize, compare_sqlite: bool, run: u32) -> Result<SpaceFigures, Failure> {
    let mut figures = SpaceFigures::default();
    let untrusted = build(&folder.fresh("spaces-untrusted", run)?, size, false)?;
    (figures.recall_untrusted, figures.removed) = timed_recall(&untrusted, Removal::Untrusted)?;
    drop(untrusted);
    let erase = build(&folder.fresh("spaces-erase", run)?, size, false)?;
    (figures.recall_erase, _) = timed_recall(&erase, Removal::Erase)?;
    drop(erase);
    (figures.first_answer, figures.first_answer_dependents) = first_answer(&folder.fresh("spaces-first", run)?, size)?;
    (figures.space_writes_per_second, figures.agent_writes_per_second) =
        write_rates(&folder.fresh("spaces-writes", run)?, size.writes_per_writer)?;
    if compare_sqlite {
        let (untrusted, removed) =
            sqlite::recall(&folder.fresh("spaces-sqlite-untrusted", run)?, size, Removal::Untrusted)?;
        let (erase, _) = sqlite::recall(&folder.fresh("spaces-sqlite-erase", run)?, size, Removal::Erase)?;
        figures.sqlite_untrusted = Some(untrusted);
        figures.sqlite_erase = Some(erase);
        figures.sqlite_removed = Some(removed);
    }
    Ok(figures)
}

/// A member closed during the recall applies it at its next open, before it answers: an
/// encrypted one, since a recall opens a closed plaintext member itself (an encrypted member's
/// keys need its token). Timed: the open and one `get`.
fn first_answer(folder: &Path, size: SpaceSize) -> Result<(Duration, usize), Failure> {
    let Built { store, team, mut members, lot } = build(folder, size, true)?;
    let (closed, token) = members.pop().ok_or_else(|| Failure::new("the benchmark's space has no member"))?;
    closed.close()?;
    team.recall(lot, Mode::Fair, Removal::Untrusted)?;
    let started = Instant::now();
    let reopened = store.open_agent(&token)?;
    let answer = reopened.get(Id::from(1))?;
    let took = started.elapsed();
    if answer.is_alive() {
        return Err(Failure::new("the member's open served a shared node the space recalled"));
    }
    let dependents = reopened.memories()?.len();
    if dependents != 0 {
        return Err(Failure::new(format!("the member's open kept {dependents} memories built on the recalled lot")));
    }
    Ok((took, size.private_per_member))
}

/// Write rates side by side: `MEMBERS` members each adding `writes` lots to the space from a
/// thread of its own, then `MEMBERS` threads adding as many lots to one agent (whose writers
/// share syncs through group commit).
fn write_rates(folder: &Path, writes: usize) -> Result<(f64, f64), Failure> {
    let store = Store::open(folder)?;
    let admin = store.open_agent(&store.create_agent("admin")?)?;
    let team = store.create_space("team", &admin)?;
    let mut handles = Vec::with_capacity(MEMBERS);
    for member in 0..MEMBERS {
        let name = format!("writer-{member}");
        let agent = store.open_agent(&store.create_agent(&name)?)?;
        team.grant(&name, Role::Write)?;
        handles.push(agent.space("team")?);
    }
    let space_rate = rate(MEMBERS * writes, || {
        std::thread::scope(|scope| {
            let running: Vec<_> = handles
                .iter()
                .map(|handle| scope.spawn(move || add_lots(writes, |label, content| handle.add_lot(label, content))))
                .collect();
            running.into_iter().try_for_each(|thread| thread.join().map_err(|_| Failure::new("a writer panicked"))?)
        })
    })?;
    let agent = store.open_agent(&store.create_agent("one-agent")?)?;
    let agent_rate = rate(MEMBERS * writes, || {
        std::thread::scope(|scope| {
            let running: Vec<_> = (0..MEMBERS)
                .map(|_| scope.spawn(|| add_lots(writes, |label, content| agent.add_lot(label, content))))
                .collect();
            running.into_iter().try_for_each(|thread| thread.join().map_err(|_| Failure::new("a writer panicked"))?)
        })
    })?;
    if team.alive()?.0.len() != MEMBERS * writes || agent.lots()?.len() != MEMBERS * writes {
        return Err(Failure::new("a writer's lots are missing after the timed writes"));
    }
    Ok((space_rate, agent_rate))
}

/// Adds `writes` lots through `add`.
fn add_lots(writes: usize, add: impl Fn(&str, &[u8]) -> Result<Id, cheesedb::Error>) -> Result<(), Failure> {
    for index in 0..writes {
        add("note", format!("a note written by one of the writers, number {index}").as_bytes())?;
    }
    Ok(())
}

/// `count` divided by how long `work` took, a second.
fn rate(count: usize, work: impl FnOnce() -> Result<(), Failure>) -> Result<f64, Failure> {
    let started = Instant::now();
    work()?;
    Ok(count as f64 / started.elapsed().as_secs_f64().max(1e-9))
}

fn ratio(slower: Option<Duration>, faster: Duration) -> Option<f64> {
    slower.map(|slower| slower.as_secs_f64() / faster.as_secs_f64().max(1e-9))
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The lowest and highest of `value` over `runs`, as "low-high" with `decimals` decimals.
fn range_over(runs: &[SpaceFigures], decimals: usize, value: impl Fn(&SpaceFigures) -> f64) -> String {
    let values: Vec<f64> = runs.iter().map(value).collect();
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{low:.decimals$}-{high:.decimals$}")
}

fn write_ratio(figures: &SpaceFigures) -> f64 {
    figures.space_writes_per_second / figures.agent_writes_per_second.max(1e-9)
}

/// Prints the figures (medians of `runs`), the ratios and the targets.
fn print(figures: &SpaceFigures, runs: &[SpaceFigures], size: SpaceSize, printer: Printer) -> Result<(), Failure> {
    let untrusted_ratio = ratio(figures.sqlite_untrusted, figures.recall_untrusted);
    let erase_ratio = ratio(figures.sqlite_erase, figures.recall_erase);
    let untrusted_ratios =
        range_over(runs, 1, |run| ratio(run.sqlite_untrusted, run.recall_untrusted).unwrap_or_default());
    let erase_ratios = range_over(runs, 1, |run| ratio(run.sqlite_erase, run.recall_erase).unwrap_or_default());
    let value = json!({
        "shared_memories": size.shared,
        "members": MEMBERS,
        "private_per_member": size.private_per_member,
        "removed": figures.removed,
        "recall_untrusted_ms": milliseconds(figures.recall_untrusted),
        "recall_erase_ms": milliseconds(figures.recall_erase),
        "first_answer_ms": milliseconds(figures.first_answer),
        "first_answer_dependents": figures.first_answer_dependents,
        "sqlite_recall_untrusted_ms": figures.sqlite_untrusted.map(milliseconds),
        "sqlite_recall_erase_ms": figures.sqlite_erase.map(milliseconds),
        "sqlite_removed": figures.sqlite_removed,
        "untrusted_ratio": untrusted_ratio,
        "erase_ratio": erase_ratio,
        "space_writes_per_second": figures.space_writes_per_second,
        "agent_writes_per_second": figures.agent_writes_per_second,
        "runs": runs.len(),
    });
    printer.result(value, || {
        let mut lines = vec![
            format!(
                "a space of {} shared memories, {MEMBERS} members with {} private memories each on them; medians of {} runs",
                size.shared,
                size.private_per_member,
                runs.len()
            ),
            format!(
                "recall, Untrusted, members' part included: {:.1} ms ({} memories removed)",
                milliseconds(figures.recall_untrusted),
                figures.removed
            ),
            format!("recall, Erase, members' part included: {:.1} ms", milliseconds(figures.recall_erase)),
            format!(
                "first answer of a member that applies the recall at its open ({} dependents): {:.1} ms (target: at most 10 ms)",
                figures.first_answer_dependents,
                milliseconds(figures.first_answer)
            ),
        ];
        lines.push(format!(
            "writes from {MEMBERS} members to the space: {:.0} a second; {MEMBERS} threads on one agent: {:.0} a second ({:.2}x, runs {}x; target: at least 1x)",
            figures.space_writes_per_second,
            figures.agent_writes_per_second,
            write_ratio(figures),
            range_over(runs, 2, write_ratio)
        ));
        if let (Some(untrusted), Some(erase)) = (figures.sqlite_untrusted, figures.sqlite_erase) {
            lines.push(format!(
                "SQLite, one database: Untrusted {:.1} ms, Erase (secure_delete) {:.1} ms, {} removed",
                milliseconds(untrusted),
                milliseconds(erase),
                figures.sqlite_removed.unwrap_or_default()
            ));
            lines.push(format!(
                "ratios: Untrusted {:.1}x, runs {untrusted_ratios}x (target: at least 50x); Erase {:.1}x, runs {erase_ratios}x (target: at least 1x)",
                untrusted_ratio.unwrap_or_default(),
                erase_ratio.unwrap_or_default()
            ));
        }
        lines.join("\n")
    })
}

/// The same graph in one SQLite database: every log's nodes in one table, the space's lot
/// first, then its memories, then each member's.
#[cfg(feature = "sqlite")]
mod sqlite {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use cheesedb::{Mode, Removal};

    use super::{SpaceSize, MEMBERS};
    use crate::engine::Engine;
    use crate::failure::Failure;
    use crate::sqlite_side::SqliteSide;
    use crate::workload::PlannedNode;

    /// Builds the graph and times the recall of the lot; returns the time and what it removed.
    pub fn recall(folder: &Path, size: SpaceSize, removal: Removal) -> Result<(Duration, usize), Failure> {
        let mut side = SqliteSide::create(folder)?;
        let lot =
            PlannedNode::Lot { label: "web", content: b"the shared source every shared memory rests on".to_vec() };
        let lot_id = side.write_batch(&[lot])?.first().copied().ok_or_else(|| Failure::new("SQLite wrote no lot"))?;
        let shared: Vec<PlannedNode> = (0..size.shared)
            .map(|index| PlannedNode::Memory {
                content: format!("shared memory {index} learned from the source").into_bytes(),
                legs: vec![vec![lot_id]],
            })
            .collect();
        let shared_ids = side.write_batch(&shared)?;
        for member in 0..MEMBERS {
            let private: Vec<PlannedNode> = (0..size.private_per_member)
                .map(|index| PlannedNode::Memory {
                    content: format!("member {member} private memory {index}").into_bytes(),
                    legs: vec![shared_ids.get(index % shared_ids.len()).copied().into_iter().collect()],
                })
                .collect();
            side.write_batch(&private)?;
        }
        let started = Instant::now();
        let removed = side.recall(lot_id, Mode::Fair, removal)?;
        Ok((started.elapsed(), removed.len()))
    }
}

#[cfg(not(feature = "sqlite"))]
mod sqlite {
    use std::path::Path;
    use std::time::Duration;

    use cheesedb::Removal;

    use super::SpaceSize;
    use crate::failure::Failure;

    pub fn recall(_folder: &Path, _size: SpaceSize, _removal: Removal) -> Result<(Duration, usize), Failure> {
        Err(Failure::new("this cheesedb-bench was built without SQLite"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smoke_run_removes_the_whole_graph_and_the_closed_member_catches_up() {
        let folder = BenchFolder::new(None).unwrap();
        let figures = measure(&folder, SMOKE, false, 1).unwrap();
        assert_eq!(figures.removed, SMOKE.shared + MEMBERS * SMOKE.private_per_member);
        assert_eq!(figures.first_answer_dependents, SMOKE.private_per_member);
        assert!(figures.space_writes_per_second > 0.0 && figures.agent_writes_per_second > 0.0);
    }

    #[test]
    fn repeated_runs_give_the_median_of_each_figure_and_the_range_of_a_ratio() {
        let run = |milliseconds: u64, sqlite: Option<u64>, writes: f64| SpaceFigures {
            recall_untrusted: Duration::from_millis(milliseconds),
            sqlite_untrusted: sqlite.map(Duration::from_millis),
            space_writes_per_second: writes,
            agent_writes_per_second: 100.0,
            ..SpaceFigures::default()
        };
        let runs = [run(5, Some(250), 90.0), run(3, Some(240), 110.0), run(4, Some(260), 100.0)];
        let middle = medians(&runs);
        assert_eq!(middle.recall_untrusted, Duration::from_millis(4));
        assert_eq!(middle.sqlite_untrusted, Some(Duration::from_millis(250)));
        assert_eq!(write_ratio(&middle), 1.0);
        assert_eq!(range_over(&runs, 2, write_ratio), "0.90-1.10");
        let one_uncompared = [run(5, Some(250), 90.0), run(3, None, 110.0)];
        assert_eq!(medians(&one_uncompared).sqlite_untrusted, None);
    }
}

//! Which faults a simulated disk injects, how often, and the count of each it did inject.
//!
//! Every seed draws its own probabilities from a profile (swarm testing): one seed may fail many
//! fsyncs and never flip a bit, the next the other way round, which reaches combinations a fixed
//! mix of faults would almost never produce.

use core::fmt;

use crate::random::Random;

/// One kind of fault the simulated disk can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A file sync returns an error; some of the unsynced writes may have reached the disk.
    SyncFailed,
    /// A folder sync returns an error; some of the unsynced name changes may have reached the disk.
    FolderSyncFailed,
    /// A write returns an error and writes nothing.
    WriteFailed,
    /// A write stores only a prefix of its bytes and returns an error.
    ShortWrite,
    /// A write or length change that would grow a file returns "no space" and changes nothing.
    NoSpace,
    /// A read returns an error.
    ReadError,
    /// A create, rename or remove returns an error and changes nothing.
    NameChangeFailed,
    /// A bit of a stored byte flips (on the medium and in the cache), silently.
    BitFlip,
    /// A write reports success but its bytes land at another offset or in another file.
    MisdirectedWrite,
    /// A file sync reports success but one sector of one of its writes never reaches the medium:
    /// the medium keeps its older durable bytes there (a stale sector) while the cache shows the
    /// new ones, until a crash, or until a later write of that sector is synced.
    LostWrite,
}

impl FaultKind {
    /// Every kind, in the order summaries print them.
    pub const ALL: [FaultKind; 10] = [
        FaultKind::SyncFailed,
        FaultKind::FolderSyncFailed,
        FaultKind::WriteFailed,
        FaultKind::ShortWrite,
        FaultKind::NoSpace,
        FaultKind::ReadError,
        FaultKind::NameChangeFailed,
        FaultKind::BitFlip,
        FaultKind::MisdirectedWrite,
        FaultKind::LostWrite,
    ];

    /// The kind's name in summaries and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::SyncFailed => "sync-failed",
            FaultKind::FolderSyncFailed => "folder-sync-failed",
            FaultKind::WriteFailed => "write-failed",
            FaultKind::ShortWrite => "short-write",
            FaultKind::NoSpace => "no-space",
            FaultKind::ReadError => "read-error",
            FaultKind::NameChangeFailed => "name-change-failed",
            FaultKind::BitFlip => "bit-flip",
            FaultKind::MisdirectedWrite => "misdirected-write",
            FaultKind::LostWrite => "lost-write",
        }
    }

    /// Whether the fault is silent: the operation reports success, and only a later read or
    /// check can notice the damage.
    pub fn is_silent(self) -> bool {
        matches!(self, FaultKind::BitFlip | FaultKind::MisdirectedWrite | FaultKind::LostWrite)
    }

    fn position(self) -> usize {
        FaultKind::ALL.iter().position(|kind| *kind == self).unwrap_or(0)
    }
}

/// How many faults of each kind were injected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    counts: [u64; FaultKind::ALL.len()],
}

impl FaultCounts {
    /// Counts one more fault of `kind`.
    pub fn add(&mut self, kind: FaultKind) {
        if let Some(count) = self.counts.get_mut(kind.position()) {
            *count += 1;
        }
    }

    /// How many faults of `kind`.
    pub fn count(&self, kind: FaultKind) -> u64 {
        self.counts.get(kind.position()).copied().unwrap_or(0)
    }

    /// All faults.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Silent faults (bit flips, misdirected and lost writes).
    pub fn silent(&self) -> u64 {
        FaultKind::ALL.iter().filter(|kind| kind.is_silent()).map(|kind| self.count(*kind)).sum()
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &FaultCounts) {
        self.counts.iter_mut().zip(other.counts).for_each(|(mine, theirs)| *mine += theirs);
    }
}

impl fmt::Display for FaultCounts {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for kind in FaultKind::ALL {
            if !first {
                formatter.write_str(", ")?;
            }
            first = false;
            write!(formatter, "{} {}", kind.name(), self.count(kind))?;
        }
        Ok(())
    }
}

/// A named way of choosing each seed's fault probabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultProfile {
    /// No faults; only crashes.
    None,
    /// Every kind, rarely.
    Light,
    /// Every kind, often.
    Heavy,
    /// Each seed enables a random subset of kinds, each with its own probability.
    Swarm,
}

impl FaultProfile {
    /// Every profile, for help texts.
    pub const ALL: [FaultProfile; 4] =
        [FaultProfile::None, FaultProfile::Light, FaultProfile::Heavy, FaultProfile::Swarm];

    /// The profile's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultProfile::None => "none",
            FaultProfile::Light => "light",
            FaultProfile::Heavy => "heavy",
            FaultProfile::Swarm => "swarm",
        }
    }

    /// The profile called `name`.
    pub fn from_name(name: &str) -> Option<FaultProfile> {
        FaultProfile::ALL.into_iter().find(|profile| profile.name() == name)
    }
}

/// How a crash treats each unsynced write, as probabilities; whatever is left over drops it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrashOdds {
    /// The write reached the disk whole.
    pub keep: f64,
    /// A prefix of the write reached the disk.
    pub prefix: f64,
    /// The write reached the disk with some of its sectors garbled.
    pub garble: f64,
    /// An unsynced create, rename or remove reached the disk.
    pub keep_name_change: f64,
}

/// The probabilities one seed runs with: of each fault, per operation it can hit.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Per file sync.
    pub sync_failed: f64,
    /// Per folder sync.
    pub folder_sync_failed: f64,
    /// Per write.
    pub write_failed: f64,
    /// Per write.
    pub short_write: f64,
    /// Per write or length change that grows a file.
    pub no_space: f64,
    /// Per read.
    pub read_error: f64,
    /// Per create, rename or remove.
    pub name_change_failed: f64,
    /// Per storage operation: a random stored byte flips one bit.
    pub bit_flip: f64,
    /// Per write.
    pub misdirected_write: f64,
    /// Per file sync that makes at least one write durable.
    pub lost_write: f64,
    /// What a crash does to unsynced changes.
    pub crash: CrashOdds,
    /// Virtual time each operation takes, before jitter: reads, writes, syncs.
    pub latency_ticks: [u64; 3],
}

impl FaultPlan {
    /// No faults at all; crashes drop or keep unsynced changes evenly.
    pub fn none() -> FaultPlan {
        FaultPlan {
            sync_failed: 0.0,
            folder_sync_failed: 0.0,
            write_failed: 0.0,
            short_write: 0.0,
            no_space: 0.0,
            read_error: 0.0,
            name_change_failed: 0.0,
            bit_flip: 0.0,
            misdirected_write: 0.0,
            lost_write: 0.0,
            crash: CrashOdds { keep: 0.4, prefix: 0.2, garble: 0.1, keep_name_change: 0.5 },
            latency_ticks: [1, 2, 50],
        }
    }

    /// The plan `profile` gives the seed whose stream is `random`.
    pub fn draw(profile: FaultProfile, random: &mut Random) -> FaultPlan {
        let mut plan = FaultPlan::none();
        plan.crash = CrashOdds {
            keep: random.between(0, 100) as f64 / 100.0 * 0.6,
            prefix: random.between(0, 100) as f64 / 100.0 * 0.3,
            garble: random.between(0, 100) as f64 / 100.0 * 0.1,
            keep_name_change: random.between(0, 100) as f64 / 100.0,
        };
        plan.latency_ticks = [random.between(1, 3), random.between(1, 10), random.between(10, 500)];
        let scale = match profile {
            FaultProfile::None => return plan,
            FaultProfile::Light => 0.2,
            FaultProfile::Heavy => 3.0,
            FaultProfile::Swarm => 1.0,
        };
        let swarm = profile == FaultProfile::Swarm;
        // Base rates per operation; swarm turns each kind on with even odds and scales it by a
        // factor from 1/16 to 4, so some seeds see storms of one fault and none of another.
        let mut rate = |base: f64| -> f64 {
            if swarm {
                if random.chance(0.5) {
                    return 0.0;
                }
                let factor = (1u64 << random.below(7)) as f64 / 16.0;
                (base * factor).min(0.5)
            } else {
                (base * scale).min(0.5)
            }
        };
        plan.sync_failed = rate(0.01);
        plan.folder_sync_failed = rate(0.01);
        plan.write_failed = rate(0.005);
        plan.short_write = rate(0.005);
        plan.no_space = rate(0.003);
        plan.read_error = rate(0.002);
        plan.name_change_failed = rate(0.005);
        plan.bit_flip = rate(0.0005);
        plan.misdirected_write = rate(0.001);
        plan.lost_write = rate(0.004);
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_round_trip_through_their_names() {
        for profile in FaultProfile::ALL {
            assert_eq!(FaultProfile::from_name(profile.name()), Some(profile));
        }
        assert_eq!(FaultProfile::from_name("storm"), None);
    }

    #[test]
    fn no_faults_profile_injects_nothing() {
        let plan = FaultPlan::draw(FaultProfile::None, &mut Random::seeded(3));
        assert_eq!(plan.sync_failed + plan.bit_flip + plan.read_error, 0.0);
    }

    #[test]
    fn swarm_seeds_differ_in_their_mix() {
        let plans: Vec<FaultPlan> =
            (0..20).map(|seed| FaultPlan::draw(FaultProfile::Swarm, &mut Random::seeded(seed))).collect();
        assert!(plans.iter().any(|plan| plan.sync_failed == 0.0));
        assert!(plans.iter().any(|plan| plan.sync_failed > 0.0));
    }

    #[test]
    fn counts_add_up_and_print_every_kind() {
        let mut counts = FaultCounts::default();
        counts.add(FaultKind::BitFlip);
        counts.add(FaultKind::SyncFailed);
        assert_eq!(counts.total(), 2);
        assert_eq!(counts.silent(), 1);
        let text = counts.to_string();
        assert!(text.contains("bit-flip 1") && text.contains("misdirected-write 0"));
    }
}

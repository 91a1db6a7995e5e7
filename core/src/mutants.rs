//! Deliberate bugs, compiled only with the `mutants` feature and off until switched on at run
//! time. The simulator switches one on and must then report a violation: proof that its checks
//! would notice a real bug of that kind.

use core::sync::atomic::{AtomicU8, Ordering};

/// One deliberate bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mutant {
    /// A durable write is acknowledged without syncing the segment.
    SkipSyncBeforeAcknowledge = 1,
    /// A rewritten segment is renamed into place without syncing the folder.
    SkipFolderSyncAfterRename = 2,
    /// Open cuts the active segment at its first damaged record, even when a valid commit
    /// marker stands after the damage.
    CutAtFirstDamage = 3,
    /// A Strict recall removes only what a Fair one would.
    StrictLikeFair = 4,
    /// Open leaves an erase journal unapplied, so overwrites a crash tore stay torn.
    SkipEraseJournalReplay = 5,
    /// A commit marker is taken for its batch without comparing the batch's checksum, so records
    /// that each check but were never committed together (a redacted record reverted to its text)
    /// are served.
    IgnoreBatchChecksum = 6,
    /// Open takes a whole segment header of another agent or place, in the newest segment, for
    /// a torn one, and cuts the segment down to a fresh header.
    TruncateForeignHeader = 7,
    /// Open erases the text a snapshot's flags ask to erase, without the log confirming it.
    EraseOnSnapshotWord = 8,
    /// A recall leaves the recalled nodes in a search index already built, so searches find
    /// them until the next open rebuilds the index from the log.
    SearchKeepsRecalled = 9,
    /// An Erase on an encrypted agent leaves the keys of the erased nodes in the key table.
    SkipKeyDestruction = 10,
    /// An Erase on an encrypted agent destroys slots but never rotates the epoch, so the copy of
    /// each secret that its record holds stays readable with the token.
    SkipEpochRotation = 11,
    /// A follower takes a replica's head that verifies on its own without checking that its
    /// history passes through the point the follower's files hold, so a forged or forked head
    /// replaces the history the follower had.
    FollowerSkipsChainCheck = 12,
    /// A shipper deletes as its own leftovers every key a LIST answer names, also keys outside
    /// its agent's folder that a lying object store (or one that ignores the prefix) names.
    ShipperDeletesForeignKeys = 13,
    /// A restore takes the access facts of a head (token hash, agent number) without comparing
    /// them with the other heads and the target catalog, so a head given another agent's token
    /// hash is adopted.
    RestoreTrustsHeadGrant = 14,
    /// A follower takes a piece for one its files already hold when its file and byte range
    /// match, without comparing the digest: a stretch shipped again whole with the same bounds
    /// (after an Erase) keeps the old bytes.
    FollowerTrustsRangeWithoutDigest = 15,
    /// A member leaves a space's recalls unapplied, so it goes on serving what it built on a
    /// recalled shared node.
    MemberSkipsSpaceRecall = 16,
    /// A member applies a space's Erase as an Untrusted recall, so the text of what it built on
    /// the erased node stays in its files.
    MemberEraseLeavesText = 17,
    /// Open resumes from a snapshot without the shared nodes it holds, so a space's recall
    /// finds none of the member's to reach.
    SnapshotLosesSharedNodes = 18,
    /// A compaction takes the text out of a live node whose id follows a recalled one, as an
    /// off-by-one in choosing what to drop would.
    CompactionDropsLiveText = 19,
}

impl Mutant {
    /// Every mutant.
    pub const ALL: [Mutant; 19] = [
        Mutant::SkipSyncBeforeAcknowledge,
        Mutant::SkipFolderSyncAfterRename,
        Mutant::CutAtFirstDamage,
        Mutant::StrictLikeFair,
        Mutant::SkipEraseJournalReplay,
        Mutant::IgnoreBatchChecksum,
        Mutant::TruncateForeignHeader,
        Mutant::EraseOnSnapshotWord,
        Mutant::SearchKeepsRecalled,
        Mutant::SkipKeyDestruction,
        Mutant::SkipEpochRotation,
        Mutant::FollowerSkipsChainCheck,
        Mutant::ShipperDeletesForeignKeys,
        Mutant::RestoreTrustsHeadGrant,
        Mutant::FollowerTrustsRangeWithoutDigest,
        Mutant::MemberSkipsSpaceRecall,
        Mutant::MemberEraseLeavesText,
        Mutant::SnapshotLosesSharedNodes,
        Mutant::CompactionDropsLiveText,
    ];

    /// The mutant's name on the simulator's command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mutant::SkipSyncBeforeAcknowledge => "skip-sync-before-acknowledge",
            Mutant::SkipFolderSyncAfterRename => "skip-folder-sync-after-rename",
            Mutant::CutAtFirstDamage => "cut-at-first-damage",
            Mutant::StrictLikeFair => "strict-like-fair",
            Mutant::SkipEraseJournalReplay => "skip-erase-journal-replay",
            Mutant::IgnoreBatchChecksum => "ignore-batch-checksum",
            Mutant::TruncateForeignHeader => "truncate-foreign-header",
            Mutant::EraseOnSnapshotWord => "erase-on-snapshot-word",
            Mutant::SearchKeepsRecalled => "search-keeps-recalled",
            Mutant::SkipKeyDestruction => "skip-key-destruction",
            Mutant::SkipEpochRotation => "skip-epoch-rotation",
            Mutant::FollowerSkipsChainCheck => "follower-skips-chain-check",
            Mutant::ShipperDeletesForeignKeys => "shipper-deletes-foreign-keys",
            Mutant::RestoreTrustsHeadGrant => "restore-trusts-head-grant",
            Mutant::FollowerTrustsRangeWithoutDigest => "follower-trusts-range-without-digest",
            Mutant::MemberSkipsSpaceRecall => "member-skips-space-recall",
            Mutant::MemberEraseLeavesText => "member-erase-leaves-text",
            Mutant::SnapshotLosesSharedNodes => "snapshot-loses-shared-nodes",
            Mutant::CompactionDropsLiveText => "compaction-drops-live-text",
        }
    }

    /// The mutant called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// Switches `mutant` on (or every mutant off, with `None`) for the whole process.
pub fn activate(mutant: Option<Mutant>) {
    ACTIVE.store(mutant.map_or(0, |mutant| mutant as u8), Ordering::Relaxed);
}

/// Whether `mutant` is switched on.
pub fn is_active(mutant: Mutant) -> bool {
    ACTIVE.load(Ordering::Relaxed) == mutant as u8
}

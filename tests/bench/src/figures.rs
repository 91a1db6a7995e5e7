//! The figures a run measures, each with its unit and which way is better, and medians over
//! several runs.

use std::collections::BTreeMap;

use cheesedb::{Mode, Removal};

/// How a figure is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second.
    PerSecond,
    /// Bytes per second.
    BytesPerSecond,
    /// Seconds.
    Seconds,
    /// Microseconds.
    Microseconds,
    /// Bytes.
    Bytes,
    /// A plain count.
    Count,
}

/// Which way a figure is better; counts are neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (rates).
    Higher,
    /// Less is better (durations, sizes).
    Lower,
    /// Not a speed: the engines must agree on it.
    Neither,
}

/// Everything a run measures. The order is the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    SingleWritesPerSecond,
    SingleWriteMedianMicroseconds,
    SingleWriteP99Microseconds,
    Batch64MemoriesPerSecond,
    Batch1024MemoriesPerSecond,
    EightThreadsWritesPerSecond,
    RecallSeconds(RecallKind),
    RecallPreviewSeconds(RecallKind),
    RecallRemoved(RecallKind),
    StoreOpenSeconds,
    AgentOpenSeconds,
    OpenRecordsReplayed,
    GraphBytesPerMemory,
    ResidentBytesPerMemory,
    VerifyBytesPerSecond,
    VerifySeconds,
    CompactSeconds,
    DiskBytes,
    SetupMemoriesPerSecond,
    SearchKeywordMedianSeconds,
    SearchKeywordP99Seconds,
    SearchHitsCount,
    SearchAgentOpenSeconds,
    SearchFirstSeconds,
    SearchIndexBytesPerMemory,
    SearchFirstResidentBytesPerMemory,
    SearchTextBytesPerMemory,
    SearchWritesPerSecondUnsearched,
    SearchWritesPerSecondSearched,
    SearchDiskBytes,
    SearchSetupMemoriesPerSecond,
    VectorMedianSeconds,
    VectorP99Seconds,
    HybridMedianSeconds,
    VectorSetupMemoriesPerSecond,
}

/// One of the four recalls: Fair or Strict, Untrusted or Erase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecallKind {
    FairUntrusted,
    StrictUntrusted,
    FairErase,
    StrictErase,
}

impl RecallKind {
    /// All four, in the order the scenarios run them.
    pub const ALL: [RecallKind; 4] =
        [RecallKind::FairUntrusted, RecallKind::StrictUntrusted, RecallKind::FairErase, RecallKind::StrictErase];

    /// The mode and removal of this recall.
    pub fn mode_and_removal(self) -> (Mode, Removal) {
        match self {
            RecallKind::FairUntrusted => (Mode::Fair, Removal::Untrusted),
            RecallKind::StrictUntrusted => (Mode::Strict, Removal::Untrusted),
            RecallKind::FairErase => (Mode::Fair, Removal::Erase),
            RecallKind::StrictErase => (Mode::Strict, Removal::Erase),
        }
    }

    fn key(self) -> &'static str {
        match self {
            RecallKind::FairUntrusted => "fair_untrusted",
            RecallKind::StrictUntrusted => "strict_untrusted",
            RecallKind::FairErase => "fair_erase",
            RecallKind::StrictErase => "strict_erase",
        }
    }

    /// The recall's name for people.
    pub fn title(self) -> &'static str {
        match self {
            RecallKind::FairUntrusted => "Fair, Untrusted",
            RecallKind::StrictUntrusted => "Strict, Untrusted",
            RecallKind::FairErase => "Fair, Erase",
            RecallKind::StrictErase => "Strict, Erase",
        }
    }
}

impl Metric {
    /// The figure's name in JSON: words joined by underscores, unit last.
    pub fn key(self) -> String {
        match self {
            Metric::SingleWritesPerSecond => "single_writes_per_second".into(),
            Metric::SingleWriteMedianMicroseconds => "single_write_median_microseconds".into(),
            Metric::SingleWriteP99Microseconds => "single_write_p99_microseconds".into(),
            Metric::Batch64MemoriesPerSecond => "batch_64_memories_per_second".into(),
            Metric::Batch1024MemoriesPerSecond => "batch_1024_memories_per_second".into(),
            Metric::EightThreadsWritesPerSecond => "eight_threads_writes_per_second".into(),
            Metric::RecallSeconds(kind) => format!("recall_{}_seconds", kind.key()),
            Metric::RecallPreviewSeconds(kind) => format!("recall_{}_preview_seconds", kind.key()),
            Metric::RecallRemoved(kind) => format!("recall_{}_removed_count", kind.key()),
            Metric::StoreOpenSeconds => "store_open_seconds".into(),
            Metric::AgentOpenSeconds => "agent_open_seconds".into(),
            Metric::OpenRecordsReplayed => "open_records_replayed_count".into(),
            Metric::GraphBytesPerMemory => "graph_bytes_per_memory".into(),
            Metric::ResidentBytesPerMemory => "resident_bytes_per_memory".into(),
            Metric::VerifyBytesPerSecond => "verify_bytes_per_second".into(),
            Metric::VerifySeconds => "verify_seconds".into(),
            Metric::CompactSeconds => "compact_seconds".into(),
            Metric::DiskBytes => "disk_bytes".into(),
            Metric::SetupMemoriesPerSecond => "setup_memories_per_second".into(),
            Metric::SearchKeywordMedianSeconds => "search_keyword_median_seconds".into(),
            Metric::SearchKeywordP99Seconds => "search_keyword_p99_seconds".into(),
            Metric::SearchHitsCount => "search_hits_count".into(),
            Metric::SearchAgentOpenSeconds => "search_agent_open_seconds".into(),
            Metric::SearchFirstSeconds => "search_first_after_open_seconds".into(),
            Metric::SearchIndexBytesPerMemory => "search_index_bytes_per_memory".into(),
            Metric::SearchFirstResidentBytesPerMemory => "search_first_resident_bytes_per_memory".into(),
            Metric::SearchTextBytesPerMemory => "search_text_bytes_per_memory".into(),
            Metric::SearchWritesPerSecondUnsearched => "search_writes_unsearched_per_second".into(),
            Metric::SearchWritesPerSecondSearched => "search_writes_searched_per_second".into(),
            Metric::SearchDiskBytes => "search_disk_bytes".into(),
            Metric::SearchSetupMemoriesPerSecond => "search_setup_memories_per_second".into(),
            Metric::VectorMedianSeconds => "vector_median_seconds".into(),
            Metric::VectorP99Seconds => "vector_p99_seconds".into(),
            Metric::HybridMedianSeconds => "hybrid_median_seconds".into(),
            Metric::VectorSetupMemoriesPerSecond => "vector_setup_memories_per_second".into(),
        }
    }

    /// The figure's name for people.
    pub fn title(self) -> String {
        match self {
            Metric::SingleWritesPerSecond => "one durable write, rate".into(),
            Metric::SingleWriteMedianMicroseconds => "one durable write, median".into(),
            Metric::SingleWriteP99Microseconds => "one durable write, 99th percentile".into(),
            Metric::Batch64MemoriesPerSecond => "batches of 64, memories".into(),
            Metric::Batch1024MemoriesPerSecond => "batches of 1,024, memories".into(),
            Metric::EightThreadsWritesPerSecond => "8 threads, one write each commit".into(),
            Metric::RecallSeconds(kind) => format!("recall ({})", kind.title()),
            Metric::RecallPreviewSeconds(kind) => format!("  its dry run ({})", kind.title()),
            Metric::RecallRemoved(kind) => format!("  removed by it ({})", kind.title()),
            Metric::StoreOpenSeconds => "open of the store".into(),
            Metric::AgentOpenSeconds => "open of the agent".into(),
            Metric::OpenRecordsReplayed => "  records it replayed (no snapshot)".into(),
            Metric::GraphBytesPerMemory => "RAM per memory (graph)".into(),
            Metric::ResidentBytesPerMemory => "RAM per memory (resident growth)".into(),
            Metric::VerifyBytesPerSecond => "verify, log read".into(),
            Metric::VerifySeconds => "verify, whole".into(),
            Metric::CompactSeconds => "compaction".into(),
            Metric::DiskBytes => "files on disk".into(),
            Metric::SetupMemoriesPerSecond => "setup, batches of 1,024 from empty".into(),
            Metric::SearchKeywordMedianSeconds => "search: keyword top 10, median".into(),
            Metric::SearchKeywordP99Seconds => "search: keyword top 10, 99th pct".into(),
            Metric::SearchHitsCount => "  hits, all queries' top 10s".into(),
            Metric::SearchAgentOpenSeconds => "search: open of the agent".into(),
            Metric::SearchFirstSeconds => "search: first search after open".into(),
            Metric::SearchIndexBytesPerMemory => "search: index RAM per memory".into(),
            Metric::SearchFirstResidentBytesPerMemory => "  resident growth of that search".into(),
            Metric::SearchTextBytesPerMemory => "search: indexed text per memory".into(),
            Metric::SearchWritesPerSecondUnsearched => "search: one write, not yet searched".into(),
            Metric::SearchWritesPerSecondSearched => "search: one write, index built".into(),
            Metric::SearchDiskBytes => "search: files on disk".into(),
            Metric::SearchSetupMemoriesPerSecond => "search: setup, batches of 1,024".into(),
            Metric::VectorMedianSeconds => "vectors: exact top 10, median".into(),
            Metric::VectorP99Seconds => "vectors: exact top 10, 99th pct".into(),
            Metric::HybridMedianSeconds => "hybrid: top 10, median".into(),
            Metric::VectorSetupMemoriesPerSecond => "vectors: setup, batches of 1,024".into(),
        }
    }

    /// The figure's unit.
    pub fn unit(self) -> Unit {
        match self {
            Metric::SingleWritesPerSecond
            | Metric::Batch64MemoriesPerSecond
            | Metric::Batch1024MemoriesPerSecond
            | Metric::EightThreadsWritesPerSecond
            | Metric::SetupMemoriesPerSecond
            | Metric::SearchWritesPerSecondUnsearched
            | Metric::SearchWritesPerSecondSearched
            | Metric::SearchSetupMemoriesPerSecond
            | Metric::VectorSetupMemoriesPerSecond => Unit::PerSecond,
            Metric::SingleWriteMedianMicroseconds | Metric::SingleWriteP99Microseconds => Unit::Microseconds,
            Metric::RecallSeconds(_)
            | Metric::RecallPreviewSeconds(_)
            | Metric::StoreOpenSeconds
            | Metric::AgentOpenSeconds
            | Metric::VerifySeconds
            | Metric::CompactSeconds
            | Metric::SearchKeywordMedianSeconds
            | Metric::SearchKeywordP99Seconds
            | Metric::SearchAgentOpenSeconds
            | Metric::SearchFirstSeconds
            | Metric::VectorMedianSeconds
            | Metric::VectorP99Seconds
            | Metric::HybridMedianSeconds => Unit::Seconds,
            Metric::RecallRemoved(_) | Metric::OpenRecordsReplayed | Metric::SearchHitsCount => Unit::Count,
            Metric::GraphBytesPerMemory
            | Metric::ResidentBytesPerMemory
            | Metric::DiskBytes
            | Metric::SearchIndexBytesPerMemory
            | Metric::SearchFirstResidentBytesPerMemory
            | Metric::SearchTextBytesPerMemory
            | Metric::SearchDiskBytes => Unit::Bytes,
            Metric::VerifyBytesPerSecond => Unit::BytesPerSecond,
        }
    }

    /// Which way the figure is better.
    pub fn better(self) -> Better {
        match self.unit() {
            Unit::PerSecond | Unit::BytesPerSecond => Better::Higher,
            Unit::Seconds | Unit::Microseconds | Unit::Bytes => Better::Lower,
            Unit::Count => Better::Neither,
        }
    }
}

/// The figures of one engine in one run, or their medians over several runs.
pub type Figures = BTreeMap<Metric, f64>;

/// For each figure, the median of the runs that measured it.
pub fn medians(runs: &[Figures]) -> Figures {
    let mut values: BTreeMap<Metric, Vec<f64>> = BTreeMap::new();
    for run in runs {
        for (metric, value) in run {
            values.entry(*metric).or_default().push(*value);
        }
    }
    values.into_iter().map(|(metric, mut values)| (metric, median(&mut values))).collect()
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// The value below which `fraction` of `values` fall (nearest rank); 0 for none.
pub fn percentile(values: &mut [f64], fraction: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((fraction * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_take_the_middle_run() {
        let runs: Vec<Figures> =
            [3.0, 1.0, 2.0].iter().map(|value| Figures::from([(Metric::DiskBytes, *value)])).collect();
        assert_eq!(medians(&runs)[&Metric::DiskBytes], 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let mut values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&mut values, 0.99), 99.0);
        assert_eq!(percentile(&mut values, 0.5), 50.0);
        assert_eq!(percentile(&mut [7.0], 0.99), 7.0);
    }

    #[test]
    fn keys_put_the_unit_last() {
        assert_eq!(Metric::RecallSeconds(RecallKind::FairErase).key(), "recall_fair_erase_seconds");
        assert_eq!(Metric::SingleWritesPerSecond.better(), Better::Higher);
        assert_eq!(Metric::AgentOpenSeconds.better(), Better::Lower);
    }
}

//! `Agent.report()`: what opening an agent found and did, as a dict.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The report as a dict of its fields: counts as ints, `snapshot_ignored` as a str or None,
/// and `repaired_anything` as a bool.
///
/// # Errors
///
/// The error of setting an item of the dict.
pub(crate) fn report_dict<'py>(py: Python<'py>, report: &cheesedb::Report) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("segments", report.segments)?;
    dict.set_item("records", report.records)?;
    dict.set_item("records_from_snapshot", report.records_from_snapshot)?;
    dict.set_item("snapshot_ignored", report.snapshot_ignored.map(cheesedb::CorruptReason::describe))?;
    dict.set_item("dropped_bytes", report.dropped_bytes)?;
    dict.set_item("dropped_records", report.dropped_records)?;
    dict.set_item("erasures_completed_on_open", report.erasures_completed_on_open)?;
    dict.set_item("temporary_files_removed", report.temporary_files_removed)?;
    dict.set_item("segments_started_on_open", report.segments_started_on_open)?;
    dict.set_item("unfinished_rolls_undone_on_open", report.unfinished_rolls_undone_on_open)?;
    dict.set_item("erase_journals_replayed_on_open", report.erase_journals_replayed_on_open)?;
    dict.set_item("erase_journals_discarded_on_open", report.erase_journals_discarded_on_open)?;
    dict.set_item("key_slots_restored_on_open", report.key_slots_restored_on_open)?;
    dict.set_item("key_slots_cut_on_open", report.key_slots_cut_on_open)?;
    dict.set_item("epoch_slots_cut_on_open", report.epoch_slots_cut_on_open)?;
    dict.set_item("epoch_slots_destroyed_on_open", report.epoch_slots_destroyed_on_open)?;
    dict.set_item("epoch_rotations_finished_on_open", report.epoch_rotations_finished_on_open)?;
    dict.set_item("dead_text_nodes", report.dead_text_nodes)?;
    dict.set_item("segments_compacted", report.segments_compacted)?;
    dict.set_item("repaired_anything", report.repaired_anything())?;
    Ok(dict)
}

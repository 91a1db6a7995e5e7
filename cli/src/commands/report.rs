//! `cheesedb report AGENT`: what opening the agent found and did.

use serde_json::json;

use crate::arguments::AgentOnly;
use crate::commands::Context;
use crate::failure::Failure;
use crate::session::open_agent;

/// Prints the open report, and the text compaction would take out now; JSON holds every field
/// of `cheesedb::Report` by name. Each command
/// opens the store afresh, so this is what this open found; a repair made by an earlier command
/// was noted on that command's standard error.
pub fn run(arguments: AgentOnly, context: &Context) -> Result<(), Failure> {
    let agent = open_agent(&context.folder, context.access, &arguments.agent)?;
    let report = agent.report();
    let value = json!({
        "segments": report.segments,
        "records": report.records,
        "records_from_snapshot": report.records_from_snapshot,
        "snapshot_ignored": report.snapshot_ignored.map(cheesedb::CorruptReason::describe),
        "dropped_bytes": report.dropped_bytes,
        "dropped_records": report.dropped_records,
        "erasures_completed_on_open": report.erasures_completed_on_open,
        "temporary_files_removed": report.temporary_files_removed,
        "segments_started_on_open": report.segments_started_on_open,
        "unfinished_rolls_undone_on_open": report.unfinished_rolls_undone_on_open,
        "erase_journals_replayed_on_open": report.erase_journals_replayed_on_open,
        "erase_journals_discarded_on_open": report.erase_journals_discarded_on_open,
        "key_slots_restored_on_open": report.key_slots_restored_on_open,
        "key_slots_cut_on_open": report.key_slots_cut_on_open,
        "epoch_slots_cut_on_open": report.epoch_slots_cut_on_open,
        "epoch_slots_destroyed_on_open": report.epoch_slots_destroyed_on_open,
        "epoch_rotations_finished_on_open": report.epoch_rotations_finished_on_open,
        "dead_text_nodes": report.dead_text_nodes,
        "segments_compacted": report.segments_compacted,
        "repaired_anything": report.repaired_anything(),
    });
    context.printer.result(value, || {
        let mut lines = vec![
            format!("segments:                   {}", report.segments),
            format!("records:                    {}", report.records),
            format!("  of them from a snapshot:  {}", report.records_from_snapshot),
            format!("dropped bytes (torn write): {}", report.dropped_bytes),
            format!("dropped records:            {}", report.dropped_records),
            format!("erasures finished on open:  {}", report.erasures_completed_on_open),
            format!("temporary files removed:    {}", report.temporary_files_removed),
            format!("segments started on open:   {}", report.segments_started_on_open),
            format!("unfinished rolls undone:    {}", report.unfinished_rolls_undone_on_open),
            format!("erase journals replayed:    {}", report.erase_journals_replayed_on_open),
            format!("erase journals discarded:   {}", report.erase_journals_discarded_on_open),
            format!("key slots restored:         {}", report.key_slots_restored_on_open),
            format!("key slots past the end cut: {}", report.key_slots_cut_on_open),
            format!("torn epoch slots cut:       {}", report.epoch_slots_cut_on_open),
            format!("epoch slots destroyed:      {}", report.epoch_slots_destroyed_on_open),
            format!("epoch rotations finished:   {}", report.epoch_rotations_finished_on_open),
            format!("recalled, text still kept:  {} (compaction takes it out)", report.dead_text_nodes),
            format!("segments compacted:         {}", report.segments_compacted),
        ];
        if let Some(reason) = report.snapshot_ignored {
            lines.push(format!("snapshot not used:          {reason} (the whole log was replayed)"));
        }
        lines.push(String::from(if report.repaired_anything() {
            "open repaired what an interrupted write or damage left (see above)"
        } else {
            "open found nothing to repair"
        }));
        lines.join("\n")
    })
}

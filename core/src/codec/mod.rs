//! The on-disk types: byte layouts as named constants, a decoder that never panics on any input,
//! and golden-byte tests at the bottom of each file.

pub mod bytes;
pub mod catalog_file;
pub mod epoch_file;
pub mod erase_journal;
pub mod key_file_header;
pub mod key_table_file;
pub mod recalled_ids;
pub mod record;
pub mod segment_header;
pub mod snapshot_file;

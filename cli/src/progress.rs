//! Progress bars on standard error, drawn only when it is a terminal: scripts and logs get none.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting bytes up to `total_bytes`, or a hidden one when standard error is no terminal.
pub fn bytes_bar(total_bytes: u64, message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total_bytes);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_owned());
    bar
}

/// A spinner for work of unknown length, or a hidden one when standard error is no terminal.
pub fn spinner(message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.set_message(message.to_owned());
    spinner.enable_steady_tick(Duration::from_millis(100));
    spinner
}

/// A bar counting `total` items, or a hidden one when standard error is no terminal.
pub fn count_bar(total: u64, message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_owned());
    bar
}

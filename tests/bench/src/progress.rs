//! Where the benchmark is: a bar per phase on a terminal, one line per phase in a log.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Shows the phases of the benchmark on standard error.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    terminal: bool,
}

/// One phase under way; its bar goes when this is dropped.
#[derive(Debug)]
pub struct Phase {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Bars when standard error is a terminal, plain lines otherwise.
    pub fn new() -> Progress {
        Progress { terminal: std::io::stderr().is_terminal() }
    }

    /// Nothing at all, for tests.
    #[cfg(test)]
    pub fn hidden() -> Progress {
        Progress { terminal: false }
    }

    /// Starts a phase of `engine` (empty when every engine takes part); with a `total`, the
    /// bar counts up to it.
    pub fn phase(&self, engine: &str, what: &str, total: Option<u64>) -> Phase {
        if !self.terminal {
            if !cfg!(test) {
                let separator = if engine.is_empty() { "" } else { ": " };
                eprintln!("cheesedb-bench: {engine}{separator}{what}");
            }
            return Phase { bar: None };
        }
        let bar = match total {
            Some(total) => {
                let bar = ProgressBar::new(total);
                if let Ok(style) = ProgressStyle::with_template("{prefix:>9} {msg:<34} [{bar:30}] {pos}/{len} ({eta})")
                {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar
            }
            None => {
                let bar = ProgressBar::new_spinner();
                if let Ok(style) = ProgressStyle::with_template("{prefix:>9} {msg:<34} {spinner} {elapsed}") {
                    bar.set_style(style);
                }
                bar.enable_steady_tick(Duration::from_millis(100));
                bar
            }
        };
        bar.set_prefix(engine.to_owned());
        bar.set_message(what.to_owned());
        Phase { bar: Some(bar) }
    }
}

impl Phase {
    /// Counts `done` more units of the phase.
    pub fn advance(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(done);
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

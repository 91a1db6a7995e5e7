//! The pool of rings that a storage and the files it adopted draw from.
//!
//! A file keeps a ring while it has writes queued; reads, folder syncs and files without a ring
//! borrow one from here and give it back, so a store opens few rings however many files it has.

use std::io;
use std::sync::{Arc, Mutex};

use crate::ring::{Counters, Ring};

/// How many idle rings a storage keeps for reuse; more are closed.
const IDLE_RINGS_MAX: usize = 8;

/// The rings shared by the clones of a storage and their files, and the counters of their work.
#[derive(Debug, Default)]
pub(crate) struct RingPool {
    /// Rings not owned by a file, ready for reads, folder syncs and newly written files.
    idle_rings: Mutex<Vec<Ring>>,
    counters: Arc<Counters>,
}

impl RingPool {
    /// The counters every ring of this pool adds to.
    pub(crate) fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    /// An idle ring, or a new one.
    pub(crate) fn take_ring(&self) -> io::Result<Ring> {
        let idle = self.idle_rings.lock().ok().and_then(|mut rings| rings.pop());
        match idle {
            Some(ring) => Ok(ring),
            None => Ring::new(self.counters.clone()),
        }
    }

    /// Keeps `ring` for reuse, unless it is broken or enough rings are idle already.
    pub(crate) fn give_back(&self, ring: Ring) {
        if ring.is_broken() {
            return;
        }
        if let Ok(mut rings) = self.idle_rings.lock() {
            if rings.len() < IDLE_RINGS_MAX {
                rings.push(ring);
            }
        }
    }
}

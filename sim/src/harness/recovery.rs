//! Reopening after a crash or cleanly: open the store and every agent (crashing again during
//! recovery, sometimes), settle what was in doubt, and run the full check.

use std::collections::BTreeSet;

use cheesedb_core::{AgentEngine, Error, StoreEngine, Token};

use super::sealed::{open_agent_engine, ERASED_NODE_OPENS, IN_THE_CLEAR};
use super::world::{call, Called, Slot, Step, Stop, StoreDoubt, World};
use crate::compare::shape_matches;
use crate::model::Text;
use crate::storage::SimStorage;

/// The most crashes injected into one recovery, so that every reopen ends.
const RECOVERY_CRASHES_MAX: u32 = 3;
/// The most attempts at opening after transient storage errors.
const OPEN_ATTEMPTS_MAX: u32 = 30;

/// Why opening everything did not finish.
enum OpenFailure {
    PowerLost,
    Failed(Error),
    Stop(Stop),
}

/// What opening everything opened: the engines of the agents the harness can open, and the
/// names of encrypted agents whose token it never got.
#[derive(Default)]
struct Opened {
    engines: Vec<(String, u64, AgentEngine<SimStorage>)>,
    locked: BTreeSet<String>,
}

impl From<Stop> for OpenFailure {
    fn from(stop: Stop) -> OpenFailure {
        OpenFailure::Stop(stop)
    }
}

impl World {
    /// Closes everything, crashes first if `crash`, opens everything again and checks it all.
    pub(crate) fn reopen(&mut self, crash: bool) -> Step {
        self.store = None;
        for slot in &mut self.agents {
            slot.engine = None;
        }
        // An armed crash may fire while the engines close (a snapshot written on drop): then
        // this reopen follows a crash, whatever was asked.
        let crash = crash || self.storage.is_powered_off();
        if crash {
            self.storage.crash();
            self.stats.crashes += 1;
        }
        self.stats.reopens += 1;
        let faults_before = self.storage.fault_counts().total();
        let mut recovery_crashes = 0;
        let mut attempts = 0;
        self.recovery_interrupted = false;
        let opened = loop {
            attempts += 1;
            if recovery_crashes < RECOVERY_CRASHES_MAX && self.random.chance(self.recovery_crash_chance) {
                let countdown = self.random.below(40);
                self.storage.arm_crash(countdown);
            }
            let result = self.open_everything();
            self.storage.disarm_crash();
            self.recovery_interrupted |= result.is_err();
            match result {
                Ok(opened) => break opened,
                Err(OpenFailure::PowerLost) => {
                    self.storage.crash();
                    recovery_crashes += 1;
                    self.stats.crashes += 1;
                    self.stats.crashes_during_recovery += 1;
                }
                Err(OpenFailure::Failed(error)) if error.is_corruption() => return self.corruption(&error, "open"),
                Err(OpenFailure::Failed(error)) if attempts >= OPEN_ATTEMPTS_MAX => {
                    return Err(Stop::Violation(format!("opening keeps failing: {error}")));
                }
                Err(OpenFailure::Failed(_)) => self.stats.failures_reported += 1,
                Err(OpenFailure::Stop(stop)) => return Err(stop),
            }
        };
        let faults_during_open = self.storage.fault_counts().total() != faults_before;
        let clean = !crash && recovery_crashes == 0 && !faults_during_open;
        self.reconcile(opened, clean)?;
        if faults_during_open {
            // A fault during the opens (a bit flipped at rest) may have hit an agent opened
            // before it, which meets it only at its next open: that open may rightly repair.
            self.faults_at_last_check = faults_before;
        }
        Ok(())
    }

    /// The token of agent `name`, if the harness has it (an agent whose delete is in doubt
    /// included).
    fn token_of(&self, name: &str) -> Option<Token> {
        let doubted = match &self.store_doubt {
            Some(StoreDoubt::Delete { slot }) => Some(slot.as_ref()),
            _ => None,
        };
        self.agents.iter().chain(doubted).find(|slot| slot.name == name).and_then(|slot| slot.token.clone())
    }

    /// Opens the store and every agent it names (an encrypted one with its token; one whose
    /// token the harness never got is only checked to be refused without it).
    fn open_everything(&mut self) -> Result<Opened, OpenFailure> {
        self.store = None;
        let storage = self.storage.clone();
        let options = self.options.clone();
        let store = match call(&storage, "open store", || StoreEngine::open(storage.clone(), options))? {
            Called::Done(store) => store,
            Called::PowerLost => return Err(OpenFailure::PowerLost),
            Called::Failed(error) => return Err(OpenFailure::Failed(error)),
            Called::Refused(error) => return Err(Stop::Violation(format!("opening the store refused: {error}")).into()),
        };
        let mut opened = Opened::default();
        for name in store.agent_names() {
            let number = store
                .agent_number(&name)
                .map_err(|error| Stop::Violation(format!("a listed agent has no number: {error}")))?;
            let token = self.token_of(&name);
            if token.is_none() && store.is_encrypted(number) {
                let refused = store.open_agent_by_number(number).map(|_| ());
                if refused != Err(Error::UnknownToken) {
                    let message = format!("opening encrypted agent {name} without its token answered {refused:?}");
                    return Err(Stop::Violation(message).into());
                }
                opened.locked.insert(name);
                continue;
            }
            match call(&storage, "open agent", || open_agent_engine(&store, number, token.as_ref()))? {
                Called::Done(engine) => opened.engines.push((name, number, engine)),
                Called::PowerLost => return Err(OpenFailure::PowerLost),
                Called::Failed(error) => return Err(OpenFailure::Failed(error)),
                Called::Refused(error) => {
                    return Err(Stop::Violation(format!("opening agent {name} refused: {error}")).into())
                }
            }
        }
        self.store = Some(store);
        Ok(opened)
    }

    /// Settles store-level doubt, hands the engines to their slots, settles each agent's doubt
    /// and checks every agent in full.
    fn reconcile(&mut self, opened: Opened, clean: bool) -> Step {
        let Opened { engines: opened, locked } = opened;
        let found: BTreeSet<String> =
            opened.iter().map(|(name, _, _)| name.clone()).chain(locked.iter().cloned()).collect();
        let known: BTreeSet<String> =
            self.agents.iter().map(|slot| slot.name.clone()).chain(self.locked_agents.iter().cloned()).collect();
        match self.store_doubt.take() {
            None if found == known => {}
            None => return Err(Stop::Violation(format!("the store lists agents {found:?}, the model {known:?}"))),
            Some(StoreDoubt::Create { name }) => {
                let mut with = known.clone();
                with.insert(name.clone());
                if found == with && locked.contains(&name) {
                    // An encrypted agent whose token never came back: nobody can open it.
                    self.stats.unacknowledged_kept += 1;
                    self.locked_agents.insert(name);
                } else if found == with {
                    self.stats.unacknowledged_kept += 1;
                    let number = opened.iter().find(|(found, _, _)| *found == name).map_or(0, |(_, number, _)| *number);
                    self.agents.push(Slot::new(name, None, number, false));
                } else if found == known {
                    self.stats.unacknowledged_lost += 1;
                } else {
                    return Err(Stop::Violation(format!(
                        "after an unacknowledged create of {name:?} the store lists {found:?}, the model {known:?}"
                    )));
                }
            }
            Some(StoreDoubt::Delete { slot }) => {
                let mut with = known.clone();
                with.insert(slot.name.clone());
                if found == known {
                    self.stats.unacknowledged_kept += 1;
                } else if found == with {
                    self.stats.unacknowledged_lost += 1;
                    self.agents.push(*slot);
                } else {
                    return Err(Stop::Violation(format!(
                        "after an unacknowledged delete of {:?} the store lists {found:?}",
                        slot.name
                    )));
                }
            }
        }
        for (name, number, engine) in opened {
            let slot = self
                .agents
                .iter_mut()
                .find(|slot| slot.name == name)
                .ok_or_else(|| Stop::Violation(format!("harness error: no slot for {name}")))?;
            if slot.number != number {
                return Err(Stop::Violation(format!("agent {name} has number {number}, it had {}", slot.number)));
            }
            slot.engine = Some(engine);
        }
        for index in 0..self.agents.len() {
            self.reconcile_agent(index, clean)?;
        }
        self.faults_at_last_check = self.storage.fault_counts().total();
        Ok(())
    }

    /// Decides whether the agent's unacknowledged write happened, then checks everything.
    fn reconcile_agent(&mut self, index: usize, clean: bool) -> Step {
        let silent_faults = self.storage.fault_counts().silent() > 0;
        let slot = self.slot(index)?;
        let engine =
            slot.engine.as_ref().ok_or_else(|| Stop::Violation("harness error: agent not open".to_string()))?;
        let mut kept = None;
        if let Some(after) = slot.in_doubt.take() {
            let happened = match (shape_matches(engine, &after), shape_matches(engine, &slot.model)) {
                // Only a vector tells them apart (a vector set alone changes no shape).
                (true, true) => Some(self.vectors_follow(index, &after)?),
                (true, false) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            };
            let slot = self.slot(index)?;
            let dropped_bytes = slot.engine.as_ref().map_or(0, |engine| engine.report().dropped_bytes);
            if happened == Some(true) {
                // The write reached the disk whole: from now on it is as good as acknowledged,
                // since the engine serves it.
                slot.before_last_write = core::mem::replace(&mut slot.model, after);
                kept = Some(true);
            } else if happened == Some(false) {
                kept = Some(false);
                // An Erase whose recall record a flipped bit made look torn, so open cut it
                // (and said so), may still have had its overwrites finished from its journal:
                // the text and vectors it covered may be gone although the recall is not there.
                if silent_faults && dropped_bytes > 0 {
                    for (node, erased) in slot.model.nodes.iter_mut().zip(&after.nodes) {
                        if erased.text == Text::Absent && node.text != Text::Absent {
                            node.text = Text::Either;
                        }
                        if erased.numbers == Text::Absent && node.numbers != Text::Absent {
                            node.numbers = Text::Either;
                        }
                    }
                }
            }
        }
        match kept {
            Some(true) => self.stats.unacknowledged_kept += 1,
            Some(false) => self.stats.unacknowledged_lost += 1,
            None => {}
        }
        match self.check_agent(index, clean) {
            Err(Stop::Violation(message)) => self.excuse_silent_loss(index, message),
            other => other,
        }
    }

    /// A silent fault in the last committed write of the active segment looks exactly like a
    /// torn write: open cuts it and says so in its report. For a flipped bit, that and only that
    /// is excused: the agent must be exactly as before its last append. A misdirected write is
    /// beyond what the engine can see (it never reads back what it wrote): it may drop a whole
    /// rewritten segment, or an append that landed in another file may simply be missing. The
    /// run ends there, counted, as it does when the engine reports corruption.
    pub(crate) fn excuse_silent_loss(&mut self, index: usize, message: String) -> Step {
        if message.contains(MARKER_MISMATCH_PASSED) {
            // Whatever the disk did, verify must never pass it.
            return Err(Stop::Violation(message));
        }
        let faults = self.storage.fault_counts();
        let slot = self.slot(index)?;
        let Some(engine) = slot.engine.as_ref() else { return Err(Stop::Violation(message)) };
        let cut_reported = engine.report().dropped_bytes > 0 || self.recovery_interrupted;
        let slot = self.slot(index)?;
        let Some(engine) = slot.engine.as_ref() else { return Err(Stop::Violation(message)) };
        if faults.silent() > 0 && cut_reported && shape_matches(engine, &slot.before_last_write) {
            // The lost write may have been an Erase whose erasure did finish: its text may be
            // gone although its recall record is not. And text a write since then left in
            // doubt (a compaction cut short) stays in doubt.
            let mut restored = slot.before_last_write.clone();
            for (node, now) in restored.nodes.iter_mut().zip(&slot.model.nodes) {
                if now.text != node.text && node.text != crate::model::Text::Absent {
                    node.text = crate::model::Text::Either;
                }
                if now.numbers != node.numbers && node.numbers != crate::model::Text::Absent {
                    node.numbers = crate::model::Text::Either;
                }
            }
            slot.model = restored;
            slot.kept = None;
            self.stats.silent_losses_reported += 1;
            let checked = self.check_agent(index, false);
            if checked.is_ok() || !unseen_writes_possible(&faults) {
                return checked;
            }
        }
        if faults.count(crate::storage::FaultKind::MisdirectedWrite) > 0 {
            self.stats.misdirected_losses += 1;
            return Err(Stop::Detected(format!("a misdirected write cost acknowledged data: {message}")));
        }
        if faults.count(crate::storage::FaultKind::LostWrite) > 0 && !erased_text_is_back(&message) {
            self.stats.lost_write_losses += 1;
            return Err(Stop::Detected(format!("a lost write cost acknowledged data: {message}")));
        }
        Err(Stop::Violation(message))
    }

    /// Closes one agent and opens it again, then checks it.
    pub(crate) fn reopen_agent(&mut self, index: usize) -> Step {
        self.slot(index)?.engine = None;
        self.recovery_interrupted = false;
        self.open_agent(index)?;
        if self.slot(index)?.engine.is_some() {
            return self.reconcile_agent(index, false);
        }
        Ok(())
    }

    /// Opens agent `index` into its slot; on failure, reopens the whole store.
    pub(crate) fn open_agent(&mut self, index: usize) -> Step {
        let (number, token) = {
            let slot = self.slot(index)?;
            (slot.number, slot.token.clone())
        };
        let storage = self.storage.clone();
        let store = self.store.as_ref().ok_or_else(|| Stop::Violation("harness error: no store open".to_string()))?;
        match call(&storage, "open agent", || open_agent_engine(store, number, token.as_ref()))? {
            Called::Done(engine) => {
                self.slot(index)?.engine = Some(engine);
                Ok(())
            }
            Called::PowerLost => self.reopen(true),
            Called::Failed(error) if error.is_corruption() => self.corruption(&error, "open agent"),
            Called::Failed(_) => {
                self.stats.failures_reported += 1;
                self.reopen(false)
            }
            Called::Refused(error) => Err(Stop::Violation(format!("opening an agent refused: {error}"))),
        }
    }
}

/// Whether a fault may have lost a write without the engine seeing it (it never reads back what
/// it wrote): a misdirected write, or a lost one.
fn unseen_writes_possible(faults: &crate::storage::FaultCounts) -> bool {
    faults.count(crate::storage::FaultKind::MisdirectedWrite) > 0
        || faults.count(crate::storage::FaultKind::LostWrite) > 0
}

/// Whether a violation says that erased text came back (in a file, or served by `get`), or that
/// `get` served a content other than the one written: never excused by a lost write, which may
/// cost acknowledged data but must never bring back what an Erase removed or change a text.
fn erased_text_is_back(message: &str) -> bool {
    ["must be gone", "its text is Absent", "content is different", ERASED_NODE_OPENS, IN_THE_CLEAR]
        .iter()
        .any(|words| message.contains(words))
}

/// The words of the violation that finds a commit marker not matching its batch after `verify`
/// passed.
pub(crate) const MARKER_MISMATCH_PASSED: &str = "verify passed, but the commit marker";

//! A recall of an id recalled before applies its own mode and removal, is refused only when it
//! would change nothing, agrees with its preview, and replays after a reopen exactly as it ran.

use std::path::Path;

use cheesedb::{Agent, Error, Id, Leg, Mode, Removal, Store, Token};
use cheesedb_tests::files_containing;

const TEXTS: [&[u8]; 6] =
    [b"lot-a-7c1e", b"lot-b-93fd", b"lot-c-20aa", b"memory-one-5b6e", b"memory-two-e4d1", b"memory-three-0f9c"];

/// Lots A, B, C; M1 = {A} or {B}; M2 = {C}; M3 = {M1, M2}. Recalling A: Fair removes nothing
/// (M1 still holds through B), Strict removes M1 and M3.
fn reference_example(agent: &Agent) {
    let [a, b, c, one, two, three] = TEXTS;
    let a = agent.add_lot("a", a).unwrap();
    let b = agent.add_lot("b", b).unwrap();
    let c = agent.add_lot("c", c).unwrap();
    let m1 = agent.remember(one, &[Leg::from([a]), Leg::from([b])]).unwrap();
    let m2 = agent.remember(two, &[Leg::from([c])]).unwrap();
    agent.remember(three, &[Leg::from([m1, m2])]).unwrap();
}

fn fresh(folder: &Path) -> (Store, Token, Agent) {
    let store = Store::open(folder).unwrap();
    let token = store.create_agent("alice").unwrap();
    let agent = store.open_agent(&token).unwrap();
    reference_example(&agent);
    (store, token, agent)
}

fn reopen(folder: &Path, token: &Token, store: Store, agent: Agent) -> (Store, Agent) {
    drop(agent);
    drop(store);
    let store = Store::open(folder).unwrap();
    let agent = store.open_agent(token).unwrap();
    (store, agent)
}

#[derive(Debug, Clone, Copy)]
struct Recall {
    mode: Mode,
    removal: Removal,
}

fn every_recall() -> Vec<Recall> {
    let mut all = Vec::new();
    for mode in [Mode::Fair, Mode::Strict] {
        for removal in [Removal::Untrusted, Removal::Erase] {
            all.push(Recall { mode, removal });
        }
    }
    all
}

/// Everything that tells one outcome from another: alive memories, what `audit` shows, and
/// which texts are still somewhere in the folder.
#[derive(Debug, PartialEq, Eq)]
struct State {
    alive_memories: Vec<u64>,
    audited: Vec<Option<Vec<u8>>>,
    texts_on_disk: Vec<bool>,
}

fn state(folder: &Path, agent: &Agent) -> State {
    let ids = 1..=TEXTS.len() as u64;
    State {
        alive_memories: agent.memories().unwrap().into_iter().map(Id::get).collect(),
        audited: ids.map(|id| agent.audit(Id::from(id)).unwrap().content().map(<[u8]>::to_vec)).collect(),
        texts_on_disk: TEXTS.iter().map(|text| !files_containing(folder, text).is_empty()).collect(),
    }
}

/// What the second recall of A must return, from the definitions: the memories its own mode
/// reaches that are still alive, or `AlreadyRecalled` when it removes nothing and erases nothing.
/// A second Erase that removes nothing covers A and the memories the first recall killed, which
/// a first Erase took already: it erases nothing.
fn expected_second(first: Recall, second: Recall) -> Result<Vec<Id>, Error> {
    let a = Id::from(1);
    let still_alive_under_strict = matches!(first.mode, Mode::Fair);
    let removed =
        if second.mode == Mode::Strict && still_alive_under_strict { vec![Id::from(4), Id::from(6)] } else { vec![] };
    if removed.is_empty() && (second.removal == Removal::Untrusted || first.removal == Removal::Erase) {
        return Err(Error::AlreadyRecalled { id: a });
    }
    Ok(removed)
}

/// Which of A, M1 and M3 (ids 1, 4, 6) must have lost their text after both recalls.
fn expected_erased(first: Recall, second: Recall, second_result: &Result<Vec<Id>, Error>) -> Vec<u64> {
    let strict_first = first.mode == Mode::Strict;
    let mut erased = Vec::new();
    if first.removal == Removal::Erase {
        erased.push(1);
        if strict_first {
            erased.extend([4, 6]);
        }
    }
    if second.removal == Removal::Erase && second_result.is_ok() {
        // Again with Erase: A and every dead memory with A in its history.
        let dead_descendants = strict_first || second.mode == Mode::Strict;
        erased.push(1);
        if dead_descendants {
            erased.extend([4, 6]);
        }
    }
    erased.sort_unstable();
    erased.dedup();
    erased
}

fn check_second_recall(first: Recall, second: Recall, reopen_between: bool) {
    let label = format!("first {first:?}, then {second:?}, reopened between: {reopen_between}");
    let folder = tempfile::tempdir().unwrap();
    let (store, token, agent) = fresh(folder.path());
    let a = Id::from(1);
    agent.recall(a, first.mode, first.removal).unwrap();
    let (store, agent) = if reopen_between { reopen(folder.path(), &token, store, agent) } else { (store, agent) };

    let before = state(folder.path(), &agent);
    let previewed = agent.preview_recall_with(a, second.mode, second.removal);
    assert_eq!(state(folder.path(), &agent), before, "{label}: a preview changed something");
    let result = agent.recall(a, second.mode, second.removal);
    assert_eq!(previewed, result, "{label}: the preview disagrees with the recall");
    assert_eq!(result, expected_second(first, second), "{label}");
    if result.is_err() {
        assert_eq!(state(folder.path(), &agent), before, "{label}: a refused recall changed something");
    }

    let erased = expected_erased(first, second, &result);
    let live = state(folder.path(), &agent);
    for id in 1..=TEXTS.len() as u64 {
        let index = id as usize - 1;
        let gone = erased.contains(&id);
        assert_eq!(live.texts_on_disk[index], !gone, "{label}: text of {id} on disk");
        assert_eq!(live.audited[index].is_none(), gone, "{label}: audit of {id}");
        let node = agent.get(Id::from(id)).unwrap();
        if !node.is_alive() {
            assert_eq!(node.content(), None, "{label}: get shows the text of recalled {id}");
        }
    }
    let alive_after_strict = [5];
    if matches!(result.as_deref(), Ok([_, ..])) || first.mode == Mode::Strict {
        assert_eq!(live.alive_memories, alive_after_strict, "{label}: alive memories");
    }

    let fingerprint = agent.verify().unwrap();
    let (_store, agent) = reopen(folder.path(), &token, store, agent);
    assert_eq!(agent.verify().unwrap(), fingerprint, "{label}: the history after reopen");
    assert_eq!(state(folder.path(), &agent), live, "{label}: the replay differs from the live recall");
    assert_eq!(agent.report().erasures_completed_on_open, 0, "{label}: the live erasure was unfinished");
}

#[test]
fn a_second_recall_applies_its_own_mode_and_removal_live_and_after_reopen() {
    for first in every_recall() {
        for second in every_recall() {
            check_second_recall(first, second, false);
            check_second_recall(first, second, true);
        }
    }
}

#[test]
fn strict_erase_after_fair_removes_and_erases_what_strict_reaches() {
    let folder = tempfile::tempdir().unwrap();
    let (_store, _token, agent) = fresh(folder.path());
    let a = Id::from(1);
    assert_eq!(agent.recall(a, Mode::Fair, Removal::Untrusted), Ok(vec![]));
    assert_eq!(agent.preview_recall_with(a, Mode::Strict, Removal::Erase), Ok(vec![Id::from(4), Id::from(6)]));
    assert_eq!(agent.recall(a, Mode::Strict, Removal::Erase), Ok(vec![Id::from(4), Id::from(6)]));
    assert_eq!(agent.memories().unwrap(), vec![Id::from(5)]);
    for text in [TEXTS[0], TEXTS[3], TEXTS[5]] {
        assert!(files_containing(folder.path(), text).is_empty(), "{}", String::from_utf8_lossy(text));
    }
}

#[test]
fn a_repeated_recall_that_changes_nothing_is_refused_and_so_is_its_preview() {
    let folder = tempfile::tempdir().unwrap();
    let (_store, _token, agent) = fresh(folder.path());
    let a = Id::from(1);
    agent.recall(a, Mode::Strict, Removal::Untrusted).unwrap();
    let refused = Err(Error::AlreadyRecalled { id: a });
    for mode in [Mode::Fair, Mode::Strict] {
        assert_eq!(agent.preview_recall(a, mode), refused);
        assert_eq!(agent.preview_recall_with(a, mode, Removal::Untrusted), refused);
        assert_eq!(agent.recall(a, mode, Removal::Untrusted), refused);
        // An Erase still has text to take.
        assert_eq!(agent.preview_recall_with(a, mode, Removal::Erase), Ok(vec![]));
    }
}

#[test]
fn an_erase_of_what_an_erase_took_already_is_refused_and_writes_nothing() {
    for encrypted in [false, true] {
        for mode in [Mode::Fair, Mode::Strict] {
            let label = format!("encrypted {encrypted}, {mode:?}");
            let folder = tempfile::tempdir().unwrap();
            let store = Store::open(folder.path()).unwrap();
            let token = if encrypted { store.create_encrypted_agent("alice") } else { store.create_agent("alice") };
            let agent = store.open_agent(&token.unwrap()).unwrap();
            reference_example(&agent);
            let a = Id::from(1);
            agent.recall(a, Mode::Strict, Removal::Erase).unwrap();
            let head = agent.verify().unwrap();
            let refused = Err(Error::AlreadyRecalled { id: a });
            assert_eq!(agent.preview_recall_with(a, mode, Removal::Erase), refused, "{label}: preview");
            assert_eq!(agent.recall(a, mode, Removal::Erase), refused, "{label}");
            // A memory the first Erase took is refused the same way.
            assert_eq!(
                agent.recall(Id::from(4), mode, Removal::Erase),
                Err(Error::AlreadyRecalled { id: Id::from(4) })
            );
            assert_eq!(agent.verify().unwrap(), head, "{label}: a refused Erase wrote a record");
        }
    }
}
